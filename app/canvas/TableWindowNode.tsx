// A table window: virtualised rows (10k scroll smoothly), sort by a header click, filter,
// edit a cell by double-click (the agent hears of it), export through the stack worker.
import { useVirtualizer } from '@tanstack/react-virtual';
import type { Node, NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useMemo, useRef, useState } from 'preact/hooks';
import type { TableColumn, TableRow, TableWindow } from '../../worker/protocol.ts';
import { saveBytes } from '../save-bytes.ts';
import { StackCallError } from '../stack-client.ts';
import { useStackClient } from '../stack-context.ts';
import { formatCell, parseCell, visibleRows, type SortState } from './table-model.ts';
import { WindowFrame } from './WindowFrame.tsx';

export type TableWindowNodeType = Node<{ window: TableWindow }, 'table'>;

const ROW_HEIGHT = 30;

export const TableWindowNode = memo(function TableWindowNode({ data, selected }: NodeProps<TableWindowNodeType>) {
  const { window } = data;
  const client = useStackClient();
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<SortState>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const rows = useMemo(() => visibleRows(window.rows, window.columns, filter, sort), [window.rows, window.columns, filter, sort]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const template = `repeat(${window.columns.length}, minmax(110px, 1fr))`;

  const toggleSort = (key: string) =>
    setSort((current) => (current?.key !== key ? { key, direction: 'asc' } : current.direction === 'asc' ? { key, direction: 'desc' } : null));

  const exportAs = async (format: 'csv' | 'json' | 'xlsx') => {
    setProblem(null);
    try {
      const file = await client.call('export_window', { window_id: window.id, format });
      saveBytes(file.bytes, file.filename, file.mime);
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The export failed.');
    }
  };

  const tools = (
    <div class="table-tools nodrag">
      {(['csv', 'json', 'xlsx'] as const).map((format) => (
        <button key={format} type="button" class="window-tool" onClick={() => void exportAs(format)} aria-label={`Export ${window.title} as ${format.toUpperCase()}`}>
          {format.toUpperCase()}
        </button>
      ))}
    </div>
  );

  return (
    <WindowFrame window={window} selected={selected} tools={tools}>
      <div class="table">
        <input class="table-filter" type="search" placeholder={`Filter ${window.rows.length} rows…`} aria-label={`Filter ${window.title}`} value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        {problem && <p class="table-problem" role="alert">{problem}</p>}
        <div class="table-scroll" ref={scroller} role="table" aria-label={window.title} aria-rowcount={rows.length + 1}>
          <div class="table-row table-head" role="row" style={{ gridTemplateColumns: template }}>
            {window.columns.map((column) => (
              <div key={column.key} role="columnheader" class="table-cell table-header-cell" aria-sort={sort?.key === column.key ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none'}>
                <button type="button" class="table-header" onClick={() => toggleSort(column.key)} aria-label={`Sort by ${column.label}`}>
                  {column.label}
                  {sort?.key === column.key ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}
                </button>
              </div>
            ))}
          </div>
          <div style={{ height: `${virtual.getTotalSize()}px`, position: 'relative' }}>
            {virtual.getVirtualItems().map((item) => (
              <Row key={rows[item.index]!.id} row={rows[item.index]!} columns={window.columns} top={item.start} template={template} onEdit={(column, text) => edit(rows[item.index]!, column, text)} />
            ))}
          </div>
        </div>
      </div>
    </WindowFrame>
  );

  function edit(row: TableRow, column: TableColumn, text: string) {
    const parsed = parseCell(text, column);
    if ('error' in parsed) {
      setProblem(`${column.label}: ${parsed.error}`);
      return;
    }
    setProblem(null);
    if (parsed.value === (row.cells[column.key] ?? null)) return;
    void client.call('canvas_interaction', { type: 'cell_edited', window_id: window.id, row_id: row.id, column: column.key, value: parsed.value }).catch((error) => {
      setProblem(error instanceof StackCallError ? error.message : 'The edit was not saved.');
    });
  }
});

function Row({ row, columns, top, template, onEdit }: { row: TableRow; columns: TableColumn[]; top: number; template: string; onEdit(column: TableColumn, text: string): void }) {
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <div class="table-row" role="row" data-row-id={row.id} style={{ gridTemplateColumns: template, transform: `translateY(${top}px)` }}>
      {columns.map((column) =>
        editing === column.key ? (
          <input
            key={column.key}
            class="table-cell table-input"
            aria-label={`${column.label}, row ${row.id}`}
            defaultValue={row.cells[column.key] === null || row.cells[column.key] === undefined ? '' : String(row.cells[column.key])}
            autoFocus
            onBlur={(e) => {
              setEditing(null);
              onEdit(column, e.currentTarget.value);
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') e.currentTarget.blur();
              if (e.key === 'Escape') setEditing(null);
            }}
          />
        ) : (
          <div key={column.key} role="cell" class={`table-cell table-cell--${column.type}`} tabIndex={0} onDblClick={() => setEditing(column.key)} onKeyDown={(e) => e.key === 'Enter' && setEditing(column.key)}>
            {formatCell(row.cells[column.key], column)}
          </div>
        ),
      )}
    </div>
  );
}
