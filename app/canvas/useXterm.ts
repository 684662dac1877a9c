// An xterm.js terminal in `host`, wired to the computer's serial shell: its output written in,
// keystrokes sent as bytes, and its size fitted to the window and told to the guest.
import type { Terminal } from '@xterm/xterm';
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TerminalLink } from '../connection/stack-client.ts';
import { useAppStore } from '../connection/store.ts';
import { loadTerminal } from './terminal-lib.ts';

const encoder = new TextEncoder();

/** The app's own shortcuts (Ctrl/⌘ K to the chat, Alt ] / [ between windows) work in here too. */
export function isAppShortcut(event: KeyboardEvent): boolean {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') return true;
  return event.altKey && (event.code === 'BracketRight' || event.code === 'BracketLeft');
}

/** `onBinary` gives one character per byte (mouse reports in X10 mode), not text. */
export function binaryBytes(data: string): Uint8Array {
  const bytes = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
  return bytes;
}

/**
 * Returns the terminal (null until xterm has loaded) and why it could not load. `ready`: the
 * computer is up, so the size is sent again (the guest ignores sizes while it is down).
 */
export function useXterm(host: RefObject<HTMLDivElement | null>, link: TerminalLink, windowId: string, ready: boolean): { term: Terminal | null; failed: string | null } {
  const [term, setTerm] = useState<Terminal | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const fitNow = useRef<() => void>(() => {});
  const sent = useRef('');

  useEffect(() => {
    let disposed = false;
    let cleanup = () => {};
    loadTerminal()
      .then(({ Terminal, FitAddon }) => {
        if (disposed || !host.current) return;
        const terminal = new Terminal({
          fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace',
          fontSize: 13,
          cursorBlink: true,
          scrollback: 5000,
          convertEol: false,
          theme: { background: '#1b1e24', foreground: '#e6e8ee' },
        });
        const fit = new FitAddon();
        terminal.loadAddon(fit);
        terminal.attachCustomKeyEventHandler((event) => !isAppShortcut(event));
        terminal.open(host.current);

        const report = () => {
          const size = `${terminal.cols}x${terminal.rows}`;
          if (size === sent.current) return;
          sent.current = size;
          void link.resize(terminal.cols, terminal.rows).catch(() => (sent.current = ''));
        };
        // Measured after layout, and not when the window is hidden (a zero size fits nothing).
        let frame = 0;
        fitNow.current = () => {
          cancelAnimationFrame(frame);
          frame = requestAnimationFrame(() => {
            if (!host.current || host.current.clientWidth === 0 || host.current.clientHeight === 0) return;
            fit.fit();
            report();
          });
        };
        const observer = new ResizeObserver(() => fitNow.current());
        observer.observe(host.current);
        fitNow.current();

        const send = (bytes: Uint8Array) => void link.input(bytes).catch(() => {});
        const onData = terminal.onData((data) => send(encoder.encode(data)));
        const onBinary = terminal.onBinary((data) => send(binaryBytes(data)));
        let stop = () => {};
        link
          .listen((bytes) => terminal.write(bytes))
          .then(
            (unlisten) => (disposed ? unlisten() : (stop = unlisten)),
            (error: unknown) => !disposed && setFailed(`The shell could not be reached: ${error instanceof Error ? error.message : String(error)}`),
          );

        if (useAppStore.getState().focus.windowId === windowId) terminal.focus();
        setTerm(terminal);
        cleanup = () => {
          stop();
          cancelAnimationFrame(frame);
          observer.disconnect();
          onData.dispose();
          onBinary.dispose();
          terminal.dispose();
          sent.current = '';
        };
      })
      .catch((error: unknown) => !disposed && setFailed(`The terminal could not be loaded: ${error instanceof Error ? error.message : String(error)}`));
    return () => {
      disposed = true;
      cleanup();
      setTerm(null);
    };
  }, [link, windowId]);

  // Once the computer is up, it hears the size again (it may have been down when it was sent).
  useEffect(() => {
    if (!ready) return;
    sent.current = '';
    fitNow.current();
  }, [ready, term]);

  // Brought forward from the subbar or the status chip: typing goes to the shell.
  useEffect(
    () =>
      useAppStore.subscribe((state, previous) => {
        if (state.focus.request !== previous.focus.request && state.focus.windowId === windowId) term?.focus();
      }),
    [term, windowId],
  );

  return { term, failed };
}
