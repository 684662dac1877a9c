// The recorded demo: what it asks, the recording it plays, and how it is played. A person with
// no model (at a fair, in a classroom, on a kiosk offline) sees the product work on the sample
// documents: the replies are pre-recorded, everything they cause is real.
import { parseScript } from '../agent/scripted/check.ts';
import { streamOnFirstCall } from '../agent/stream-on-first-call.ts';
import type { StreamFn } from '../agent/types.ts';
import recording from './recorded-demo.json';

/** What the demo asks, shown as its request in the chat; the recording expects it. */
export const DEMO_REQUEST = 'Extract these invoices into a table, total them by vendor on the computer, and export a CSV.';

/** The model's turns read at about 400 characters a second: fast, and still followable. */
const PACE_MS = 20;

/**
 * A new playing of the shipped recording (validated: a broken recording fails here, loudly). Its
 * player, with the Anthropic client it feeds, loads when it first plays.
 */
export function recordedDemoStream(paceMs = PACE_MS): StreamFn {
  const script = parseScript(recording);
  return streamOnFirstCall(async () => (await import('./recorded-stream.ts')).createRecordedStream(script, { paceMs }));
}
