import { describe, expect, it } from 'vitest';
import type { ChartWindow, TableWindow } from '../../protocol/windows.ts';
import { chartData } from './chart-data.ts';

const table: TableWindow = {
  id: 't', kind: 'table', title: 'T', created_at: 0, updated_at: 0,
  columns: [{ key: 'v', label: 'Vendor', type: 'text' }, { key: 'n', label: 'Total', type: 'number' }],
  rows: [{ id: 'a', cells: { v: 'A', n: 3 } }, { id: 'b', cells: { v: 'B', n: '4' } }, { id: 'c', cells: { v: 'C', n: 'x' } }],
};
const chart = (source: ChartWindow['source']): ChartWindow => ({ id: 'c', kind: 'chart', title: 'C', chart: 'bar', source, created_at: 0, updated_at: 0 });

describe('chartData', () => {
  it('draws a table\'s columns, numbers from text where they are numbers', () => {
    expect(chartData(chart({ type: 'table', table_id: 't', x: 'v', y: ['n'] }), [table])).toEqual({
      ok: true,
      data: { labels: ['A', 'B', 'C'], series: [{ name: 'Total', values: [3, 4, null] }] },
    });
  });
  it('says when every series is money in one currency', () => {
    const money: TableWindow = { ...table, columns: [table.columns[0]!, { key: 'n', label: 'Total', type: 'currency', currency: 'EUR' }, { key: 'm', label: 'Net', type: 'currency', currency: 'EUR' }] };
    const drawn = chartData(chart({ type: 'table', table_id: 't', x: 'v', y: ['n', 'm'] }), [money]);
    expect(drawn.ok && drawn.data.currency).toBe('EUR');
    const mixed = { ...money, columns: [...money.columns.slice(0, 2), { key: 'm', label: 'Count', type: 'number' as const }] };
    const other = chartData(chart({ type: 'table', table_id: 't', x: 'v', y: ['n', 'm'] }), [mixed]);
    expect(other.ok && other.data.currency).toBeUndefined();
  });

  it('says why it cannot draw', () => {
    expect(chartData(chart({ type: 'table', table_id: 'gone', x: 'v', y: ['n'] }), [table])).toEqual({ ok: false, message: 'The table this chart draws (gone) is closed.' });
    expect(chartData(chart({ type: 'table', table_id: 't', x: 'v', y: ['z'] }), [table])).toEqual({ ok: false, message: 'The table no longer has the column z.' });
  });
  it('passes inline data through', () => {
    expect(chartData(chart({ type: 'inline', labels: ['x'], series: [{ name: 's', values: [1] }] }), [])).toEqual({ ok: true, data: { labels: ['x'], series: [{ name: 's', values: [1] }] } });
  });
});
