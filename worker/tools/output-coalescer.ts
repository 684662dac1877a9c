// A running tool's output (bash), gathered per tool call and handed on at most ~10 times a second.

/** Collects streamed output per tool call and hands it on at most ~10 times a second. */
export function createOutputCoalescer(send: (toolUseId: string, stream: 'stdout' | 'stderr', text: string) => void) {
  const pending = new Map<string, { stream: 'stdout' | 'stderr'; text: string }[]>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    for (const [toolUseId, parts] of pending) for (const part of parts) send(toolUseId, part.stream, part.text);
    pending.clear();
  };
  return {
    push(toolUseId: string, stream: 'stdout' | 'stderr', text: string) {
      if (!text) return;
      const parts = pending.get(toolUseId) ?? [];
      const last = parts.at(-1);
      if (last && last.stream === stream) last.text += text;
      else parts.push({ stream, text });
      pending.set(toolUseId, parts);
      timer ??= setTimeout(flush, 100);
    },
  };
}
