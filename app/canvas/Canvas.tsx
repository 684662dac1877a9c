// The infinite canvas of windows. The agent decides what is in a window; the user where it is.
import {
  applyNodeChanges,
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { TERMINAL_HIDDEN } from '../kiosk/kiosk.ts';
import { useAppStore } from '../connection/store.ts';
import { ChartWindowNode } from './ChartWindowNode.tsx';
import { DocumentWindowNode } from './DocumentWindowNode.tsx';
import { NotesWindowNode } from './NotesWindowNode.tsx';
import { TableWindowNode } from './TableWindowNode.tsx';
import { BoardWindowNode } from './BoardWindowNode.tsx';
import { TasksWindowNode } from './TasksWindowNode.tsx';
import { TimelineWindowNode } from './TimelineWindowNode.tsx';
import { TerminalWindowNode } from './TerminalWindowNode.tsx';
import { MIN_ZOOM, useFocusPan } from './useFocusPan.ts';
import { useCover } from './useCover.ts';
import { buildNodes, type WindowNode } from './window-nodes.ts';

/** Smaller than xyflow's default, so it covers less of the windows near the corner. */
const MINIMAP_STYLE = { width: 160, height: 110 };

// `satisfies`: a window kind without a component here is a compile error.
const nodeTypes = {
  notes: NotesWindowNode,
  table: TableWindowNode,
  chart: ChartWindowNode,
  document: DocumentWindowNode,
  terminal: TerminalWindowNode,
  tasks: TasksWindowNode,
  timeline: TimelineWindowNode,
  board: BoardWindowNode,
} satisfies Record<WindowNode['type'], unknown>;

export function Canvas() {
  const all = useAppStore((state) => state.view.windows);
  // A kiosk whose owner did not allow the terminal never shows one.
  const windows = useMemo(() => (TERMINAL_HIDDEN ? all.filter((win) => win.kind !== 'terminal') : all), [all]);
  const geometry = useAppStore((state) => state.geometry);
  const order = useAppStore((state) => state.order);
  const maximised = useAppStore((state) => state.maximised);
  const placeNewWindows = useAppStore((state) => state.placeNewWindows);
  const setGeometry = useAppStore((state) => state.setGeometry);
  const setViewport = useAppStore((state) => state.setViewport);
  // Read once: the view comes back where the user left it, then xyflow owns it.
  const [initialViewport] = useState(() => useAppStore.getState().viewport ?? { x: 0, y: 0, zoom: 1 });
  const [nodes, setNodes] = useState<WindowNode[]>([]);
  const latest = useRef(nodes);
  latest.current = nodes;
  const container = useRef<HTMLDivElement>(null);
  const cover = useCover(container, maximised !== null);
  useFocusPan(container, setNodes);

  // A window the user has not placed yet gets a free spot once, and keeps it.
  useEffect(() => placeNewWindows(windows), [windows, placeNewWindows]);
  useEffect(() => setNodes((previous) => buildNodes(windows, { geometry, order, maximised }, previous, cover.area)), [windows, geometry, order, maximised, cover.area]);

  const onNodesChange = useCallback(
    (changes: NodeChange<WindowNode>[]) => {
      const next = applyNodeChanges(changes, latest.current);
      latest.current = next;
      setNodes(next);
      for (const change of changes) {
        if (change.type === 'position' && change.position && change.dragging === false) {
          setGeometry(change.id, { x: change.position.x, y: change.position.y });
        }
        // A resize from a top or left handle moves the window too, so both are kept.
        if (change.type === 'dimensions' && change.dimensions && change.resizing === false) {
          const node = next.find((candidate) => candidate.id === change.id);
          setGeometry(change.id, { ...(node ? node.position : {}), width: change.dimensions.width, height: change.dimensions.height });
        }
      }
    },
    [setGeometry],
  );

  const still = maximised !== null;
  return (
    <div class="canvas" aria-label="Canvas" ref={container}>
      <ReactFlow
        onMove={cover.refresh}
        onMoveEnd={(_event, viewport) => setViewport(viewport)}
        defaultViewport={initialViewport}
        nodes={nodes}
        edges={[]}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        minZoom={MIN_ZOOM}
        maxZoom={2}
        snapToGrid
        snapGrid={[8, 8]}
        deleteKeyCode={null}
        zoomOnDoubleClick={false}
        // Stacking is the user's (the last window touched is on top), not the selection's.
        elevateNodesOnSelect={false}
        zIndexMode="manual"
        // A maximised window covers the view, so the view holds still under it.
        panOnDrag={!still}
        zoomOnScroll={!still}
        zoomOnPinch={!still}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={24} size={1.2} />
        {!still && <MiniMap pannable zoomable ariaLabel="Canvas overview" style={MINIMAP_STYLE} />}
        {!still && <Controls showInteractive={false} />}
      </ReactFlow>
      {windows.length === 0 && <p class="canvas-empty">Windows the agent opens appear here. Ask it something in the chat.</p>}
    </div>
  );
}
