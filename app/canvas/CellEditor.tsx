// The editor of one table cell, typed by its column: a date picker for dates, yes / no for
// booleans, a decimal keyboard for numbers. Enter or leaving saves, Escape cancels.
import type { CellValue, TableColumn } from '../../protocol/windows.ts';
import { editText } from './table-model.ts';

interface Props {
  column: TableColumn;
  value: CellValue | undefined;
  label: string;
  /** The text to save (parsed by the column's type), or null when the edit was cancelled. */
  onDone(text: string | null): void;
}

export function CellEditor({ column, value, label, onDone }: Props) {
  const initial = editText(value, column);
  let settled = false;
  const finish = (text: string | null) => {
    // Enter and the blur that follows it must not save twice.
    if (settled) return;
    settled = true;
    onDone(text);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const target = e.currentTarget as HTMLInputElement | HTMLSelectElement;
    if (e.key === 'Enter') {
      e.preventDefault();
      finish(target.value);
    }
    if (e.key === 'Escape') {
      // Only the editor closes; Escape elsewhere stops the agent.
      e.stopPropagation();
      finish(null);
    }
  };

  if (column.type === 'boolean') {
    return (
      <select class="table-cell table-input" aria-label={label} defaultValue={initial} autoFocus onKeyDown={onKeyDown} onBlur={(e) => finish(e.currentTarget.value)}>
        <option value="">—</option>
        <option value="yes">Yes</option>
        <option value="no">No</option>
      </select>
    );
  }
  const common = { class: 'table-cell table-input', 'aria-label': label, defaultValue: initial, autoFocus: true, onKeyDown, onBlur: (e: FocusEvent) => finish((e.currentTarget as HTMLInputElement).value) };
  if (column.type === 'date') return <input {...common} type="date" />;
  return (
    <input
      {...common}
      type="text"
      inputMode={column.type === 'number' || column.type === 'currency' ? 'decimal' : 'text'}
      onFocus={(e) => e.currentTarget.select()}
    />
  );
}
