// A small popover in the header listing the keyboard shortcuts (also in Settings).
import { SHORTCUTS } from './useShortcuts.ts';

export function ShortcutsHelp() {
  return (
    <>
      <button type="button" class="button topbar-help" popovertarget="shortcuts-help" aria-label="Keyboard shortcuts" title="Keyboard shortcuts">
        ?
      </button>
      <div id="shortcuts-help" class="shortcuts-popover" popover="auto" role="dialog" aria-label="Keyboard shortcuts">
        <h2>Keyboard shortcuts</h2>
        <ShortcutList />
      </div>
    </>
  );
}

/** The shortcuts as a definition list; shown here and in Settings. */
export function ShortcutList() {
  return (
    <dl class="shortcuts">
      {SHORTCUTS.map(([keys, what]) => (
        <div key={keys}>
          <dt>{keys}</dt>
          <dd>{what}</dd>
        </div>
      ))}
    </dl>
  );
}
