// The infinite canvas of windows. The agent decides what is in a window; the user where it is.
import {
  applyNodeChanges,
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { CanvasWindow } from '../../worker/protocol.ts';
import { placeNewWindow, useAppStore, type Geometry } from '../store.ts';
import { ChartWindowNode, type ChartWindowNodeType } from './ChartWindowNode.tsx';
import { DocumentWindowNode, type DocumentWindowNodeType } from './DocumentWindowNode.tsx';
import { NotesWindowNode, type NotesWindowNodeType } from './NotesWindowNode.tsx';
import { TableWindowNode, type TableWindowNodeType } from './TableWindowNode.tsx';

type WindowNode = NotesWindowNodeType | TableWindowNodeType | ChartWindowNodeType | DocumentWindowNodeType;

const nodeTypes = { notes: NotesWindowNode, table: TableWindowNode, chart: ChartWindowNode, document: DocumentWindowNode };

export function Canvas() {
  const windows = useAppStore((state) => state.view.windows);
  const geometry = useAppStore((state) => state.geometry);
  const setGeometry = useAppStore((state) => state.setGeometry);
  const [nodes, setNodes] = useState<WindowNode[]>([]);
  const focus = useAppStore((state) => state.focus);
  const flow = useReactFlow();

  // The subbar or the keyboard asked for a window: select it (raising it) and pan to it.
  useEffect(() => {
    const place = focus.windowId ? useAppStore.getState().geometry[focus.windowId] : undefined;
    if (!focus.windowId || !place) return;
    setNodes((current) => current.map((node) => ({ ...node, selected: node.id === focus.windowId })));
    void flow.setCenter(place.x + place.width / 2, place.y + place.height / 2, { zoom: flow.getZoom(), duration: 250 });
  }, [focus.request]);

  // A window the user has not placed yet gets a spot once, and keeps it.
  useEffect(() => {
    windows.forEach((window, index) => {
      if (!geometry[window.id]) setGeometry(window.id, placeNewWindow(index));
    });
  }, [windows, geometry, setGeometry]);

  const maximised = useAppStore((state) => state.maximised);
  const container = useRef<HTMLDivElement>(null);
  const [viewport, setViewport] = useState(0);
  useEffect(() => {
    // A maximised window covers what the canvas shows now, in the canvas's own coordinates.
    const cover = maximised && container.current ? visibleArea(flow.getViewport(), container.current) : null;
    setNodes((previous) => buildNodes(windows, geometry, previous, maximised, cover));
  }, [windows, geometry, maximised, viewport]);

  const onNodesChange = useCallback(
    (changes: NodeChange<WindowNode>[]) => {
      setNodes((current) => applyNodeChanges(changes, current));
      for (const change of changes) {
        if (change.type === 'position' && change.position && change.dragging === false) {
          setGeometry(change.id, { x: change.position.x, y: change.position.y });
        }
        if (change.type === 'dimensions' && change.dimensions && change.resizing === false) {
          setGeometry(change.id, { width: change.dimensions.width, height: change.dimensions.height });
        }
      }
    },
    [setGeometry],
  );

  return (
    <div class="canvas" aria-label="Canvas" ref={container}>
      <ReactFlow
        onMove={() => maximised && setViewport((n) => n + 1)}
        nodes={nodes}
        edges={[]}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        minZoom={0.2}
        maxZoom={2}
        snapToGrid
        snapGrid={[8, 8]}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={24} size={1.2} />
        <MiniMap pannable zoomable ariaLabel="Canvas overview" />
        <Controls showInteractive={false} />
      </ReactFlow>
      {windows.length === 0 && (
        <p class="canvas-empty">Windows the agent opens appear here. Ask it something in the chat.</p>
      )}
    </div>
  );
}

function buildNodes(
  windows: CanvasWindow[],
  geometry: Record<string, Geometry>,
  previous: WindowNode[],
  maximised: string | null,
  cover: Geometry | null,
): WindowNode[] {
  const before = new Map(previous.map((node) => [node.id, node]));
  return windows.map((window, index) => {
    const full = window.id === maximised && cover;
    const place = full ? cover : (geometry[window.id] ?? placeNewWindow(index));
    const old = before.get(window.id);
    return {
      ...old,
      id: window.id,
      type: window.kind,
      position: old?.dragging ? old.position : { x: place.x, y: place.y },
      width: place.width,
      height: place.height,
      dragHandle: '.window-titlebar',
      draggable: !full,
      zIndex: full ? 1000 : 0,
      data: { window },
    } as WindowNode;
  });
}

function visibleArea(view: { x: number; y: number; zoom: number }, element: HTMLElement): Geometry {
  const margin = 8 / view.zoom;
  return {
    x: -view.x / view.zoom + margin,
    y: -view.y / view.zoom + margin,
    width: element.clientWidth / view.zoom - 2 * margin,
    height: element.clientHeight / view.zoom - 2 * margin,
  };
}
