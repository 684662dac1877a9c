// A running tool's streamed output as the chat keeps it: the first lines and the last 64 KB, so a
// command that prints for minutes cannot fill the tab's memory. Pure, so it is unit tested.

export interface ToolOutput {
  /** The first lines, kept whatever follows. */
  head: string;
  /** Characters left out between head and tail. */
  omitted: number;
  /** The newest output. */
  tail: string;
}

export const HEAD_CHARS = 4 * 1024;
export const TAIL_CHARS = 64 * 1024;
/** A cut moves forward to the next line break when one is this near, so the tail starts on a line. */
const LINE_SLACK = 1024;

export const emptyOutput: ToolOutput = { head: '', omitted: 0, tail: '' };

/** Appends `text`, dropping from the middle once there is more than head plus tail. */
export function appendOutput(output: ToolOutput, text: string): ToolOutput {
  if (!text) return output;
  let { head, omitted, tail } = output;
  if (omitted === 0 && tail === '' && head.length < HEAD_CHARS) {
    head += text;
    if (head.length <= HEAD_CHARS) return { head, omitted, tail };
    // The head ends at a line break when it has one, and the rest goes on in the tail.
    const lineEnd = head.lastIndexOf('\n', HEAD_CHARS - 1);
    const split = lineEnd >= 0 ? lineEnd + 1 : HEAD_CHARS;
    tail = head.slice(split);
    head = head.slice(0, split);
  } else {
    tail += text;
  }
  if (tail.length > TAIL_CHARS) {
    let cut = tail.length - TAIL_CHARS;
    const lineEnd = tail.indexOf('\n', cut);
    if (lineEnd >= 0 && lineEnd < cut + LINE_SLACK) cut = lineEnd + 1;
    omitted += cut;
    tail = tail.slice(cut);
  }
  return { head, omitted, tail };
}

/** The output as one text, with a line saying how much was left out. */
export function outputText(output: ToolOutput): string {
  if (output.omitted === 0) return output.head + output.tail;
  const gap = output.head.endsWith('\n') || output.head === '' ? '' : '\n';
  return `${output.head}${gap}… ${formatChars(output.omitted)} not shown …\n${output.tail}`;
}

function formatChars(chars: number): string {
  if (chars < 1024) return `${chars} characters`;
  if (chars < 1024 * 1024) return `${Math.round(chars / 1024)} KB`;
  return `${(chars / (1024 * 1024)).toFixed(1)} MB`;
}
