// A Settings section's outcome line: a status when something worked, an alert when it did not.
export interface SectionMessageState {
  error: boolean;
  text: string;
}

export function SectionMessage({ message }: { message: SectionMessageState | null }) {
  if (!message) return null;
  return (
    <p class={message.error ? 'settings-error' : 'memory-result'} role={message.error ? 'alert' : 'status'}>
      {message.text}
    </p>
  );
}
