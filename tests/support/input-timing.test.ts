import { describe, expect, it } from 'vitest';
import { inputTimingProblems, scriptHeldFrames, type LongFrame, type SlowInput } from './input-timing.ts';

const key = (duration: number, delay = 4, handlers = 2, name = 'keydown'): SlowInput => ({ name, duration, at: 1000, delay, handlers, paint: duration - delay - handlers });

describe('inputTimingProblems', () => {
  it('lets the odd key reach the screen late when no script held it', () => {
    expect(inputTimingProblems([key(104), key(112), key(60, 31, 0, 'keyup')], [], 40)).toEqual([]);
  });

  it('refuses a key the main thread kept waiting 100 ms, however few', () => {
    const problems = inputTimingProblems([key(130, 95, 10)], [{ at: 900, duration: 140, blocking: 90, scriptMs: 120, scripts: ['Worker.onmessage ? @index.js 120 ms (layout 0)'] }], 400);
    expect(problems[0]).toMatch(/main thread kept 1 inputs waiting/);
    expect(problems.at(-1)).toMatch(/Worker\.onmessage/);
  });

  it('counts a key that waited for the frame before it to be drawn as late, not as held', () => {
    const drawing = { at: 990, duration: 116, blocking: 0, scriptMs: 0, scripts: [] };
    const waited = key(120, 93, 10, 'keypress');
    expect(inputTimingProblems([waited], [drawing], 10)).toEqual([]);
    expect(inputTimingProblems([waited], [drawing], 9)[0]).toMatch(/1 of 9 keys reached the screen after 100 ms/);
    // The same wait beside a frame a script held, or with no long frame recorded, is the app's.
    expect(inputTimingProblems([waited], [{ ...drawing, scriptMs: 80, blocking: 60 }], 10)[0]).toMatch(/main thread kept 1 inputs waiting/);
    expect(inputTimingProblems([waited], [], 10)[0]).toMatch(/main thread kept 1 inputs waiting/);
  });

  it('refuses more than one key in 10 reaching the screen after 100 ms', () => {
    expect(inputTimingProblems([key(104), key(112), key(120)], [], 29)).toHaveLength(2);
    expect(inputTimingProblems([key(104), key(112), key(120)], [], 30)).toEqual([]);
  });

  it('refuses any input on screen after 300 ms', () => {
    expect(inputTimingProblems([key(248, 1, 11, 'keyup')], [], 1000)).toEqual([]);
    expect(inputTimingProblems([key(310, 10, 5, 'keyup')], [], 1000)[0]).toMatch(/1 inputs reached the screen after 300 ms/);
  });

  it('counts a long frame against the app only when its scripts held it', () => {
    const frame = (at: number, duration: number, scriptMs: number, blocking: number): LongFrame => ({ at, duration, blocking, scriptMs, scripts: [] });
    // Short scripts in a long frame; a 140 ms task; one before the upload; a frame under 100 ms.
    const frames = [frame(4192, 110, 57, 0), frame(5000, 160, 140, 90), frame(100, 300, 280, 230), frame(6000, 90, 85, 35)];
    expect(scriptHeldFrames(frames, 3000)).toEqual([frames[1]]);
  });
});
