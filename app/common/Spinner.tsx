// A busy indicator that costs the machine almost nothing. A CSS spin animates at the display's
// rate, and every frame composites the whole page: with the computer's windows open, two spinners
// kept Chromium's GPU process at 60-80% of a core (software compositing, as on many Chromebooks
// and kiosks) while the emulator needed that core, and the recorded demo's `import pandas` did
// not finish in 3 minutes; with these it took 110 s (81 s with no spinner at all). Every spinner
// on the page turns a quarter at a time, four times a second, on one shared timer: in a bare page
// 8 against 62 ms of GPU-process CPU a second for two spinners. Still when the user asks for
// reduced motion.
import { useEffect, useRef } from 'preact/hooks';

const spinners = new Set<HTMLElement>();
let timer: ReturnType<typeof setInterval> | null = null;
let turn = 0;

function tick(): void {
  turn = (turn + 1) % 4;
  for (const element of spinners) element.style.transform = `rotate(${turn * 90}deg)`;
}

function reducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}

export function Spinner() {
  const ref = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element || reducedMotion()) return;
    spinners.add(element);
    timer ??= setInterval(tick, 250);
    return () => {
      spinners.delete(element);
      if (spinners.size === 0 && timer !== null) {
        clearInterval(timer);
        timer = null;
      }
    };
  }, []);
  return <span class="spinner" aria-hidden="true" ref={ref} />;
}
