// A table window: filter, sort, edit cells (the agent hears of each edit), export. The grid
// itself is virtualised (TableGrid), so 10k rows scroll smoothly.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useCallback, useMemo, useState } from 'preact/hooks';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import { saveBytes } from '../common/save-bytes.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { TableGrid } from './TableGrid.tsx';
import { parseCell, visibleRows, type SortState } from './table-model.ts';
import type { TableWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

const FORMATS = ['csv', 'json', 'xlsx'] as const;
const COUNT = new Intl.NumberFormat('en-US');

export const TableWindowNode = memo(function TableWindowNode({ data, selected }: NodeProps<TableWindowNodeType>) {
  const { window } = data;
  const client = useStackClient();
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<SortState>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const rows = useMemo(() => visibleRows(window.rows, window.columns, filter, sort), [window.rows, window.columns, filter, sort]);

  const exportAs = async (format: (typeof FORMATS)[number]) => {
    setProblem(null);
    try {
      // The worker makes every export (the agent's export_file too), named after the title.
      const file = await client.call('export_window', { window_id: window.id, format });
      saveBytes(file.bytes, file.filename, file.mime);
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The export failed.');
    }
  };

  const edit = useCallback(
    (row: TableRow, column: TableColumn, text: string) => {
      const parsed = parseCell(text, column);
      if ('error' in parsed) {
        setProblem(`${column.label}: ${parsed.error}`);
        return;
      }
      setProblem(null);
      // The same value again is no edit, unless OCR was unsure of it: then the user confirms it.
      if (parsed.value === (row.cells[column.key] ?? null) && row.uncertain?.[column.key] === undefined) return;
      // The worker applies the edit and tells every view (window_patched); nothing changes here
      // until it has, so the table never shows a value the stack does not hold.
      void client.call('canvas_interaction', { type: 'cell_edited', window_id: window.id, row_id: row.id, column: column.key, value: parsed.value }).catch((error) => {
        setProblem(error instanceof StackCallError ? error.message : 'The edit was not saved.');
      });
    },
    [client, window.id],
  );

  const tools = (
    <div class="table-tools nodrag" role="group" aria-label="Export">
      {FORMATS.map((format) => (
        <button key={format} type="button" class="window-tool" onClick={() => void exportAs(format)} aria-label={`Export ${window.title} as ${format.toUpperCase()}`}>
          {format.toUpperCase()}
        </button>
      ))}
    </div>
  );

  const total = window.rows.length;
  return (
    <WindowFrame window={window} selected={selected} tools={tools}>
      <div class="table">
        <div class="table-bar">
          <input
            class="table-filter"
            type="search"
            placeholder={`Filter ${COUNT.format(total)} rows…`}
            aria-label={`Filter ${window.title}`}
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
          <span class="table-count" role="status">
            {rows.length === total ? `${COUNT.format(total)} rows` : `${COUNT.format(rows.length)} of ${COUNT.format(total)}`}
          </span>
        </div>
        {problem && (
          <p class="table-problem" role="alert">
            {problem}
          </p>
        )}
        <TableGrid title={window.title} columns={window.columns} rows={rows} sort={sort} onSort={setSort} onEdit={edit} />
      </div>
    </WindowFrame>
  );
});
