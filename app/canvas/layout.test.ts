import { describe, expect, it } from 'vitest';
import { DEFAULT_SIZE, emptyLayout, migrateLayout, placeNewWindows, placeWindow, pruneLayout, raise, type Geometry } from './layout.ts';

const overlap = (a: Geometry, b: Geometry) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('placeWindow', () => {
  it('starts at the top left, then goes beside, then starts a new row', () => {
    const first = placeWindow('table', []);
    expect(first).toEqual({ x: 40, y: 40, ...DEFAULT_SIZE.table });
    const second = placeWindow('chart', [first]);
    expect(second).toMatchObject({ x: 40 + DEFAULT_SIZE.table.width + 24, y: 40 });
    const third = placeWindow('notes', [first, second]);
    expect(third).toMatchObject({ x: 40, y: 40 + DEFAULT_SIZE.chart.height + 24 });
  });

  it('never covers a window, wherever the user put them', () => {
    const placed: Geometry[] = [
      { x: 40, y: 40, width: 300, height: 200 },
      { x: 500, y: 60, width: 500, height: 400 },
      { x: 100, y: 260, width: 200, height: 200 },
    ];
    for (let i = 0; i < 30; i++) {
      const next = placeWindow(i % 2 ? 'document' : 'notes', placed);
      expect(placed.some((rect) => overlap(rect, next))).toBe(false);
      placed.push(next);
    }
  });
});

describe('layout', () => {
  it('places only windows without geometry, and brings them to the front', () => {
    const layout = { ...emptyLayout, geometry: { a: { x: 500, y: 500, width: 100, height: 100 } }, order: ['a'] };
    const next = placeNewWindows(layout, [{ id: 'a', kind: 'notes' }, { id: 'b', kind: 'table' }]);
    expect(next.geometry.a).toEqual(layout.geometry.a);
    expect(next.geometry.b).toMatchObject({ x: 40, y: 40 });
    expect(next.order).toEqual(['a', 'b']);
    expect(placeNewWindows(next, [{ id: 'a', kind: 'notes' }])).toBe(next);
  });

  it('raises a window to the top of the order', () => {
    expect(raise(['a', 'b', 'c'], 'a')).toEqual(['b', 'c', 'a']);
    const top = ['a', 'b'];
    expect(raise(top, 'b')).toBe(top);
    expect(raise(top, 'z')).toEqual(['a', 'b', 'z']);
  });

  it('forgets closed windows, and keeps the same object when nothing is gone', () => {
    const layout = { geometry: { a: { x: 0, y: 0, width: 1, height: 1 }, b: { x: 0, y: 0, width: 1, height: 1 } }, order: ['a', 'b'], maximised: 'b', viewport: { x: 1, y: 2, zoom: 1 } };
    expect(pruneLayout(layout, ['a'])).toEqual({ geometry: { a: layout.geometry.a }, order: ['a'], maximised: null, viewport: layout.viewport });
    expect(pruneLayout(layout, ['a', 'b'])).toBe(layout);
  });

  it('migrates version 1 (geometry only) and drops what is malformed', () => {
    expect(migrateLayout({ geometry: { a: { x: 1, y: 2, width: 3, height: 4 }, bad: { x: 'no' } } }, 1)).toEqual({
      geometry: { a: { x: 1, y: 2, width: 3, height: 4 } },
      order: [],
      maximised: null,
      viewport: null,
    });
    expect(migrateLayout({ geometry: {}, order: ['a', 3], maximised: 'a', viewport: { x: -5, y: 3, zoom: 0.5 } }, 2)).toEqual({ geometry: {}, order: ['a'], maximised: 'a', viewport: { x: -5, y: 3, zoom: 0.5 } });
    expect(migrateLayout({ viewport: { x: 0, y: 0, zoom: 0 } }, 2).viewport).toBeNull();
    expect(migrateLayout('garbage', 2)).toEqual(emptyLayout);
  });
});
