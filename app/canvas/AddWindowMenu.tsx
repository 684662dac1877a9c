// The subbar's +: a small menu of the windows the user can open themselves (notes, the terminal).
// Arrow keys move between its items, Esc or a click elsewhere closes it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { usePointerAway } from '../common/usePointerAway.ts';

export interface MenuChoice {
  label: string;
  icon: string;
  choose(): void;
}

export function AddWindowMenu({ choices }: { choices: MenuChoice[] }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const items = () => Array.from(root.current?.querySelectorAll<HTMLButtonElement>('[role=menuitem]') ?? []);

  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
  }, [open]);
  usePointerAway(open, root, () => setOpen(false));

  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    const move = (to: number) => {
      event.preventDefault();
      all[(to + all.length) % all.length]?.focus();
    };
    if (event.key === 'ArrowDown') move(at + 1);
    else if (event.key === 'ArrowUp') move(at - 1);
    else if (event.key === 'Home') move(0);
    else if (event.key === 'End') move(all.length - 1);
    else if (event.key === 'Tab') setOpen(false);
    else if (event.key === 'Escape') {
      // Only the menu closes; Escape elsewhere stops the agent.
      event.stopPropagation();
      close();
    }
  };

  return (
    <div class="add-menu" ref={root}>
      <button
        ref={toggle}
        type="button"
        class="subbar-add"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls="add-window-menu"
        aria-label="Add a window"
        title="Add a window"
        onClick={() => setOpen(!open)}
      >
        +
      </button>
      {open && (
        <div id="add-window-menu" class="add-menu-list" role="menu" aria-label="Add a window" onKeyDown={onKeyDown}>
          {choices.map((choice) => (
            <button
              key={choice.label}
              type="button"
              role="menuitem"
              tabIndex={-1}
              class="add-menu-item"
              onClick={() => {
                setOpen(false);
                choice.choose();
              }}
            >
              <span aria-hidden="true">{choice.icon}</span> {choice.label}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
