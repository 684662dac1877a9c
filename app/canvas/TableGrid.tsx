// The grid of a table window: sortable headers and virtualised rows (only those in view are in
// the page). A cell opens its typed editor on double-click or Enter.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo } from 'preact/compat';
import { useRef, useState } from 'preact/hooks';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import { CellEditor } from './CellEditor.tsx';
import { formatCell, type SortState } from './table-model.ts';

const ROW_HEIGHT = 30;

interface Props {
  title: string;
  columns: TableColumn[];
  rows: TableRow[];
  sort: SortState;
  onSort(sort: SortState): void;
  onEdit(row: TableRow, column: TableColumn, text: string): void;
}

export function TableGrid({ title, columns, rows, sort, onSort, onEdit }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const template = `repeat(${columns.length}, minmax(110px, 1fr))`;
  const next = (key: string): SortState => (sort?.key !== key ? { key, direction: 'asc' } : sort.direction === 'asc' ? { key, direction: 'desc' } : null);

  return (
    <div class="table-scroll" ref={scroller} role="table" aria-label={title} aria-rowcount={rows.length + 1}>
      <div class="table-row table-head" role="row" aria-rowindex={1} style={{ gridTemplateColumns: template }}>
        {columns.map((column) => (
          <div
            key={column.key}
            role="columnheader"
            class={`table-cell table-header-cell table-cell--${column.type}`}
            aria-sort={sort?.key === column.key ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none'}
          >
            <button type="button" class="table-header" onClick={() => onSort(next(column.key))} aria-label={`Sort by ${column.label}`} title={`${column.label} (${column.type}${column.currency ? `, ${column.currency}` : ''})`}>
              {column.label}
              <span aria-hidden="true">{sort?.key === column.key ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}</span>
            </button>
          </div>
        ))}
      </div>
      <div style={{ height: `${virtual.getTotalSize()}px`, position: 'relative' }}>
        {virtual.getVirtualItems().map((item) => {
          const row = rows[item.index]!;
          return <Row key={row.id} row={row} index={item.index} columns={columns} top={item.start} template={template} onEdit={onEdit} />;
        })}
      </div>
    </div>
  );
}

interface RowProps {
  row: TableRow;
  index: number;
  columns: TableColumn[];
  top: number;
  template: string;
  onEdit(row: TableRow, column: TableColumn, text: string): void;
}

const Row = memo(function Row({ row, index, columns, top, template, onEdit }: RowProps) {
  const [editing, setEditing] = useState<string | null>(null);
  // Keyboard users return to the cell they edited.
  const refocus = useRef<string | null>(null);
  return (
    <div class="table-row" role="row" aria-rowindex={index + 2} data-row-id={row.id} style={{ gridTemplateColumns: template, transform: `translateY(${top}px)` }}>
      {columns.map((column) => {
        const doubt = row.uncertain?.[column.key];
        return editing === column.key ? (
          <CellEditor
            key={column.key}
            column={column}
            value={row.cells[column.key]}
            label={`${column.label}, row ${index + 1}`}
            onDone={(text) => {
              refocus.current = column.key;
              setEditing(null);
              if (text !== null) onEdit(row, column, text);
            }}
          />
        ) : (
          <div
            key={column.key}
            role="cell"
            class={`table-cell table-cell--${column.type}${doubt !== undefined ? ' table-cell--uncertain' : ''}`}
            data-uncertain={doubt}
            aria-description={doubt !== undefined ? `OCR was unsure of this value (${doubt}% confidence): check it against the document` : undefined}
            tabIndex={0}
            ref={(element) => {
              if (element && refocus.current === column.key) {
                refocus.current = null;
                element.focus({ preventScroll: true });
              }
            }}
            title={
              doubt !== undefined
                ? `OCR was unsure of this value (${doubt}% confidence). Check it against the document; editing it clears the mark.`
                : column.type === 'date' && typeof row.cells[column.key] === 'string'
                  ? String(row.cells[column.key])
                  : undefined
            }
            onDblClick={() => setEditing(column.key)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === 'F2') {
                e.preventDefault();
                setEditing(column.key);
              }
            }}
          >
            {formatCell(row.cells[column.key], column)}
          </div>
        );
      })}
    </div>
  );
});
