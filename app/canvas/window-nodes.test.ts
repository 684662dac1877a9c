import { describe, expect, it } from 'vitest';
import type { CanvasWindow } from '../../protocol/windows.ts';
import { buildNodes, isInside, visibleArea, zoomToShow } from './window-nodes.ts';

const notes = (id: string): CanvasWindow => ({ id, kind: 'notes', title: id, content: '', created_at: 0, updated_at: 0 });
const at = (x: number) => ({ x, y: 0, width: 100, height: 80 });

describe('buildNodes', () => {
  it('places windows by the layout, stacks them by its order, and skips unplaced ones', () => {
    const windows = [notes('a'), notes('b'), notes('c')];
    const nodes = buildNodes(windows, { geometry: { a: at(0), b: at(200) }, order: ['b', 'a'], maximised: null }, [], null);
    expect(nodes.map((n) => [n.id, n.position.x, n.zIndex])).toEqual([
      ['a', 0, 2],
      ['b', 200, 1],
    ]);
  });

  it('keeps the data of unchanged windows, so their components do not redraw', () => {
    const windows = [notes('a'), notes('b')];
    const layout = { geometry: { a: at(0), b: at(200) }, order: [], maximised: null };
    const first = buildNodes(windows, layout, [], null);
    const changed = { ...windows[1]!, title: 'new' } as CanvasWindow;
    const second = buildNodes([windows[0]!, changed], layout, first, null);
    expect(second[0]!.data).toBe(first[0]!.data);
    expect(second[1]!.data).not.toBe(first[1]!.data);
  });

  it('a maximised window covers the given area, on top, and cannot be dragged', () => {
    const cover = { x: 10, y: 20, width: 800, height: 600 };
    const [node] = buildNodes([notes('a')], { geometry: { a: at(0) }, order: ['a'], maximised: 'a' }, [], cover);
    expect(node).toMatchObject({ position: { x: 10, y: 20 }, width: 800, height: 600, draggable: false });
    expect(node!.zIndex).toBeGreaterThan(1000);
  });

  it('a window being dragged keeps its live position', () => {
    const layout = { geometry: { a: at(0) }, order: [], maximised: null };
    const [dragging] = buildNodes([notes('a')], layout, [], null).map((n) => ({ ...n, dragging: true, position: { x: 55, y: 5 } }));
    expect(buildNodes([notes('a')], layout, [dragging!], null)[0]!.position).toEqual({ x: 55, y: 5 });
  });
});

describe('view math', () => {
  it('turns the viewport into canvas coordinates', () => {
    expect(visibleArea({ x: -100, y: -50, zoom: 2 }, { width: 800, height: 600 })).toEqual({ x: 54, y: 29, width: 392, height: 292 });
  });
  it('zooms out only when the window would not fit', () => {
    expect(zoomToShow({ x: 0, y: 0, width: 400, height: 300 }, { width: 1000, height: 800 }, 1, 0.2)).toBe(1);
    expect(isInside({ x: 40, y: 40, width: 360, height: 240 }, { x: 8, y: 8, width: 900, height: 700 })).toBe(true);
    expect(isInside({ x: 600, y: 40, width: 360, height: 240 }, { x: 8, y: 8, width: 900, height: 700 })).toBe(false);
    expect(isInside({ x: 0, y: 40, width: 360, height: 240 }, { x: 8, y: 8, width: 900, height: 700 })).toBe(false);
    expect(zoomToShow({ x: 0, y: 0, width: 1904, height: 300 }, { width: 1000, height: 800 }, 1, 0.2)).toBe(0.5);
    expect(zoomToShow({ x: 0, y: 0, width: 100_000, height: 300 }, { width: 1000, height: 800 }, 1, 0.2)).toBe(0.2);
  });
});
