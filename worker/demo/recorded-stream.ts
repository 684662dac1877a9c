// A model whose replies were recorded: a script in the scripted model's format (agent/scripted/,
// the one the tests' fake model plays), streamed as the API's SSE wire format through the same
// Anthropic client a real model is read with. Only the model's turns are recorded: every tool call
// they make runs for real, and a turn whose recorded expectations do not hold stops the demo
// rather than answering something the stack did not do.
import { createAnthropicStream } from '../agent/anthropic.ts';
import { ModelError, sleep } from '../agent/errors.ts';
import { fillCaptures } from '../agent/scripted/captures.ts';
import { checkExpect } from '../agent/scripted/expect.ts';
import { isErrorReply, type FakeScript, type FakeTurn, type MessageReply } from '../agent/scripted/script.ts';
import { buildMessage, errorBody, errorTypeForStatus, formatSse, streamEvents, wireError } from '../agent/scripted/wire.ts';
import type { StreamFn } from '../agent/types.ts';

export interface RecordedStreamOptions {
  /** Pause before each streamed event unless a reply sets its own `delay_ms`: a reply read at a human pace. */
  paceMs?: number;
  /** Makes the tool_use ids of this playing unique in the stack (a demo may be played twice). */
  playId?: string;
}

/** Never sent anywhere: the client's requests are answered in this worker. */
const RECORDED_ENDPOINT = 'https://recorded.invalid';

/**
 * One playing of `script`: each model call takes the next turn. Throws a ModelError
 * `demo_off_script` when a turn's expectations fail (a tool call the recording relied on failed,
 * or read something else) or when the recording has no reply left.
 */
export function createRecordedStream(script: FakeScript, options: RecordedStreamOptions = {}): StreamFn {
  const playId = options.playId ?? Math.random().toString(36).slice(2, 8);
  let turnIndex = 0;
  let usedOfTurn = 0;
  let requests = 0;
  let problem: string | null = null;

  function nextTurn(): { turn: FakeTurn; index: number; repetition: number } | null {
    const turn = script.turns[turnIndex];
    if (!turn) return null;
    const found = { turn, index: turnIndex, repetition: usedOfTurn };
    usedOfTurn += 1;
    const repeat = turn.repeat ?? 1;
    if (repeat !== -1 && usedOfTurn >= repeat) {
      turnIndex += 1;
      usedOfTurn = 0;
    }
    return found;
  }

  const answer = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const n = ++requests;
    const body = JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as Record<string, unknown>;
    const next = nextTurn();
    if (!next) return offScript(`the recording has no reply for request ${n}`, n);
    const { turn, index, repetition } = next;
    const failures = [...failedToolResults(body), ...(turn.expect ? checkExpect(turn.expect, { headers: {}, body }) : [])];
    if (failures.length > 0) return offScript(failures.join('; '), n);
    if (isErrorReply(turn.reply)) {
      const status = turn.reply.error.status;
      const error = wireError(turn.reply.error.type ?? errorTypeForStatus(status), turn.reply.error.message);
      return new Response(errorBody(error, `req_recorded_${n}`), { status, headers: { 'content-type': 'application/json', ...turn.reply.error.headers } });
    }
    const filled = fillCaptures(withIds(turn.reply, `toolu_demo_${playId}_${index}_${repetition}`), body);
    if ('problem' in filled) return offScript(filled.problem, n);
    const reply = filled.reply;
    const message = buildMessage(
      // A recording costs nothing: no tokens are counted against the user.
      { ...reply, usage: reply.usage ?? { input_tokens: 0, output_tokens: 0 } },
      { messageId: `msg_recorded_${n}`, model: String(body.model ?? 'recorded'), turn: index, repetition, requestBytes: 0 },
    );
    const events = streamEvents(message, reply.chunk_chars);
    const pace = reply.delay_ms ?? options.paceMs ?? 0;
    const signal = init?.signal ?? new AbortController().signal;
    const encoder = new TextEncoder();
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const event = events[sent++];
        if (!event) return controller.close();
        try {
          if (pace > 0) await sleep(pace, signal);
        } catch (error) {
          return controller.error(error);
        }
        controller.enqueue(encoder.encode(formatSse(event)));
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream', 'request-id': `req_recorded_${n}` } });
  };

  function offScript(why: string, n: number): Response {
    problem = why;
    return new Response(errorBody(wireError('invalid_request_error', `recorded demo off its script: ${why}`), `req_recorded_${n}`), {
      status: 400,
      headers: { 'content-type': 'application/json' },
    });
  }

  const client = createAnthropicStream({ baseURL: RECORDED_ENDPOINT, fetch: answer as typeof fetch });
  return async function* recorded(request, signal) {
    problem = null;
    try {
      yield* client(request, signal);
    } catch (error) {
      if (problem === null) throw error;
      throw new ModelError({
        code: 'demo_off_script',
        message: `The recorded demo stopped: ${problem}. Its replies were recorded for the sample documents as they ship, so it cannot go on; everything it made so far stays in the stack.`,
      });
    }
  };
}

/** Gives each tool_use a unique id unless the script names one. */
function withIds(reply: MessageReply, prefix: string): MessageReply {
  return { ...reply, content: reply.content.map((block, i) => (block.type === 'tool_use' && !block.id ? { ...block, id: `${prefix}_${i}` } : block)) };
}

/** The recording assumed every tool call it made succeeded; one that failed ends it. */
function failedToolResults(body: Record<string, unknown>): string[] {
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown }[]) : [];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as { type?: string; is_error?: boolean; content?: unknown }[]) : [];
  return blocks
    .filter((block) => block.type === 'tool_result' && block.is_error === true)
    .map((block) => `a tool call failed (${clip(typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? ''))})`);
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
