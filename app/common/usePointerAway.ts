// A popup that closes when the user presses anywhere outside it (the stack menu, the + menu).
import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';

/** While `open`, a press outside `root` calls `away`. */
export function usePointerAway(open: boolean, root: RefObject<HTMLElement | null>, away: () => void): void {
  useEffect(() => {
    if (!open) return;
    const outside = (event: PointerEvent) => {
      if (!root.current?.contains(event.target as Node)) away();
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open]);
}
