// The main screen: header, canvas, chat, settings — connected to one stack worker.
import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Canvas } from './canvas/Canvas.tsx';
import { Subbar } from './canvas/Subbar.tsx';
import { useShortcuts } from './keyboard/useShortcuts.ts';
import { useEndpointPolicy } from './security-policy/useEndpointPolicy.ts';
import { ChatPanel } from './chat/ChatPanel.tsx';
import { DemoBanner } from './banners/DemoBanner.tsx';
import { TrustBanner } from './banners/TrustBanner.tsx';
import { UpdateNotice } from './pwa/UpdateNotice.tsx';
import { suspendComputer } from './computer/suspend-computer.ts';
import { watchHiddenTab } from './computer/hidden-tab.ts';
import { beforeUpdateRestart } from './pwa/pwa.ts';
import { ComputerChip } from './computer/ComputerChip.tsx';
import { notifyFinishedRuns } from './connection/notify.ts';
import { formatSpend } from './chat/format.ts';
import { addSpend } from './connection/events.ts';
import { SettingsDialog } from './settings/SettingsDialog.tsx';
import { connectStack, type StackClient } from './connection/stack-client.ts';
import { StackClientContext } from './connection/stack-context.ts';
import { openLayout, useAppStore } from './connection/store.ts';
import { askToKeep } from './stacks/persistence.ts';
import { currentStackId, hasStackList, listStacks, rememberStack } from './stacks/stacks.ts';
import { ShortcutsHelp } from './keyboard/ShortcutsHelp.tsx';
import { StackSwitcher } from './stacks/StackSwitcher.tsx';
import { lockStack, useStackLock } from './stacks/useStackLock.ts';
import { useUploader } from './connection/useUploads.ts';
import { consumeLaunches, shareId, takeFiles, type FileTaker } from './pwa/launch-files.ts';
import { SharedFilesDialog } from './pwa/SharedFilesDialog.tsx';
import { InstallButton } from './pwa/InstallButton.tsx';
import { endKiosk, PAGE_KIOSK } from './kiosk/kiosk.ts';
import { KioskIdle, KioskOwner } from './kiosk/Kiosk.tsx';
import { stacksClient } from './stacks/stacks-client.ts';
import { StackCallError } from './connection/stack-client.ts';

// A kiosk always opens its own stack.
const STACK_ID = PAGE_KIOSK?.stack ?? currentStackId();
openLayout(STACK_ID);
/** The first stack of this browser is being made: the moment to ask the browser to keep the stacks. */
const FIRST_STACK = !hasStackList();
/** Files shared from the OS, waiting to be placed (`?share=<id>`). */
const SHARE_ID = shareId();
/** How far back the chat is rebuilt after a reload, in events. */
const HISTORY_EVENTS = 5_000;

/**
 * The stack's worker, started the moment this tab first holds the stack, as the app's script
 * runs rather than after its first render: it opens the stack while the page draws. A kiosk's
 * starts only after its reset. The first stack screen takes it; a later one starts its own.
 */
let earlyClient: StackClient | null = null;
let earlyStarted = false;
const STACK_LOCK = lockStack(STACK_ID, () => {
  if (earlyStarted || PAGE_KIOSK) return;
  earlyStarted = true;
  earlyClient = connectStack(STACK_ID);
});

export function App() {
  const lock = useStackLock(STACK_LOCK);
  const reset = useKioskReset(lock === 'held');
  if (lock === 'held' && reset.state === 'done') return <StackScreen />;
  return (
    <div class="app">
      <header class="topbar">
        <h1 class="brand">Stackdocs</h1>
      </header>
      <main class="elsewhere">
        {lock === 'held' ? (
          reset.state === 'failed' ? (
            <div class="elsewhere-card" role="alert">
              <h2>This kiosk could not start over</h2>
              <p>{reset.message}</p>
              <KioskOwner leave={() => endKiosk(null, stacksClient(), STACK_ID)} />
            </div>
          ) : (
            <p role="status">Getting ready for the next visitor…</p>
          )
        ) : lock === 'acquiring' ? (
          <p role="status">Opening…</p>
        ) : (
          <div class="elsewhere-card" role="alert">
            <h2>{lock === 'lost' ? 'This stack was opened in another tab' : 'This stack is open in another tab'}</h2>
            <p>A stack works in one tab at a time, so nothing is written twice. Use it here to move it to this tab; the other tab stops.</p>
            <button type="button" class="button button--primary" onClick={STACK_LOCK.takeOver}>
              Use it here
            </button>
          </div>
        )}
      </main>
    </div>
  );
}

/**
 * A kiosk starts over at every open (a reload, a power cut, the end of a visit): with this tab
 * holding the stack, the stack is made its reset point again before its worker starts.
 */
function useKioskReset(held: boolean): { state: 'done' | 'resetting' } | { state: 'failed'; message: string } {
  const [state, setState] = useState<{ state: 'done' | 'resetting' } | { state: 'failed'; message: string }>({ state: PAGE_KIOSK ? 'resetting' : 'done' });
  useEffect(() => {
    if (!held || !PAGE_KIOSK) return;
    stacksClient()
      .resetToPoint(STACK_ID, { heldByCaller: true })
      .then(
        () => setState({ state: 'done' }),
        (error: unknown) => setState({ state: 'failed', message: error instanceof StackCallError || error instanceof Error ? error.message : String(error) }),
      );
  }, [held]);
  return state;
}

function StackScreen() {
  const client = useMemo(() => {
    const early = earlyClient;
    earlyClient = null;
    return early ?? connectStack(STACK_ID);
  }, []);
  useEffect(() => {
    rememberStack(listStacks().find((stack) => stack.id === STACK_ID) ?? { id: STACK_ID, name: STACK_ID });
    // Settings → Storage shows the answer (and what a refusal means).
    if (FIRST_STACK) void askToKeep();
  }, []);
  useEffect(() => () => client.close(), [client]);
  // A restart into a new version of the app waits for this stack's computer to save itself. A
  // kiosk restarts into it only as it starts over (KioskIdle), when nothing is kept to save.
  useEffect(() => beforeUpdateRestart(PAGE_KIOSK ? async () => {} : () => suspendComputer(client)), [client]);
  const connection = useAppStore((state) => state.connection);
  const model = useAppStore((state) => state.view.model);
  const openSettings = useAppStore((state) => state.setSettingsOpen);
  const uploader = useUploader(client);
  const [droppedStack, setDroppedStack] = useState<File | null>(null);
  // Dropped, opened with the app from the OS, or shared to it: documents are uploads, a `.stack` file a new stack.
  const taker: FileTaker = useMemo(() => ({ upload: (files) => void uploader.upload(files), openStackFile: setDroppedStack }), [uploader]);
  useEffect(() => consumeLaunches(taker), [taker]);
  useShortcuts(client);
  useEndpointPolicy(client);

  // The stack's kiosk mark follows this browser's kiosk: a stack copied or imported from a kiosk,
  // or one whose kiosk was ended without it open, loses the mark.
  const kioskMark = useAppStore((state) => state.view.settings?.kiosk === true);
  const settingsKnown = useAppStore((state) => state.view.settings !== null);
  useEffect(() => {
    if (settingsKnown && kioskMark !== (PAGE_KIOSK !== null)) void client.call('update_settings', { kiosk: PAGE_KIOSK !== null }).catch(() => {});
  }, [settingsKnown, kioskMark]);

  // Files pasted anywhere in the app are uploaded like dropped ones.
  useEffect(() => {
    const onPaste = (event: ClipboardEvent) => {
      const files = Array.from(event.clipboardData?.files ?? []);
      if (files.length) {
        event.preventDefault();
        void uploader.upload(files);
      }
    };
    document.addEventListener('paste', onPaste);
    return () => document.removeEventListener('paste', onPaste);
  }, [uploader]);

  // A hidden tab gives memory back: the computer saved at once, idle OCR workers ended, and after
  // a while hidden an idle computer suspended (woken when shown again).
  useEffect(
    () => watchHiddenTab({ document, window, client, computerState: () => useAppStore.getState().view.computer?.state }),
    [client],
  );

  useEffect(() => {
    const { loadSnapshot, receive, setConnection } = useAppStore.getState();
    let cancelled = false;
    (async () => {
      try {
        const snapshot = await client.snapshot();
        if (cancelled) return;
        loadSnapshot(snapshot);
        // The recent log replays first (it rebuilds the chat after a reload), then live events.
        await client.subscribe(Math.max(0, snapshot.last_seq - HISTORY_EVENTS), (events) => {
          receive(events);
          notifyFinishedRuns(events, useAppStore.getState().view.scheduled);
        });
        setConnection({ state: 'ready' });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        setConnection({ state: 'failed', message: `This stack could not be opened: ${message}` });
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [client]);

  return (
    <StackClientContext.Provider value={client}>
      <div class="app" data-connection={connection.state}>
        <header class="topbar">
          <h1 class="brand">Stackdocs</h1>
          {PAGE_KIOSK ? <KioskName /> : <StackSwitcher current={STACK_ID} stackFile={droppedStack} onStackFileTaken={() => setDroppedStack(null)} />}
          <span class={`status-pill status-pill--${model.state}`} aria-label={`Model: ${modelLabel(model.state)}`}>
            {modelLabel(model.state)}
          </span>
          <ComputerChip />
          <SessionUsage />
          <span class="topbar-spacer" />
          {!PAGE_KIOSK && <InstallButton />}
          <ShortcutsHelp />
          {PAGE_KIOSK ? (
            <KioskOwner leave={() => endKiosk(client, stacksClient(), STACK_ID)} />
          ) : (
            <button type="button" class="button" onClick={() => openSettings(true)} aria-label="Settings">
              Settings
            </button>
          )}
        </header>
        <DemoBanner />
        {!PAGE_KIOSK && <TrustBanner />}
        {!PAGE_KIOSK && <UpdateNotice />}
        {connection.state === 'failed' && (
          <p class="fatal" role="alert">
            {connection.message}
          </p>
        )}
        <main
          class="workspace"
          onDragOver={(event) => {
            if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
          }}
          onDrop={(event) => {
            const files = Array.from(event.dataTransfer?.files ?? []);
            if (files.length) {
              event.preventDefault();
              takeFiles(files, taker);
            }
          }}
        >
          <ReactFlowProvider>
            <div class="canvas-column">
              <Canvas />
              <Subbar />
            </div>
          </ReactFlowProvider>
          <ChatPanel uploader={uploader} />
        </main>
        {PAGE_KIOSK ? <KioskIdle config={PAGE_KIOSK} /> : <SettingsDialog />}
        {SHARE_ID && connection.state === 'ready' && <SharedFilesDialog id={SHARE_ID} currentStack={STACK_ID} taker={taker} />}
      </div>
    </StackClientContext.Provider>
  );
}

/** A kiosk's top bar names its stack, with no menu to leave it. */
function KioskName() {
  const name = listStacks().find((stack) => stack.id === STACK_ID)?.name ?? 'Stackdocs';
  return <span class="kiosk-name">{name}</span>;
}

function SessionUsage() {
  const session = useAppStore((state) => state.view.session);
  const live = useAppStore((state) => state.view.live);
  // Finished missions plus what the running one has spent so far.
  const spent = Object.values(live).reduce(addSpend, session);
  if (spent.tokens === 0) return null;
  return (
    <span class="session-usage" title="Tokens and cost of this session">
      {formatSpend(spent, ' · cost unknown')}
    </span>
  );
}

function modelLabel(state: string): string {
  switch (state) {
    case 'ready':
      return 'Model ready';
    case 'not_configured':
      return 'No model';
    case 'unreachable':
      return 'Offline';
    default:
      return 'Checking model…';
  }
}
