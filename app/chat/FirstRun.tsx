// The first thing a new stack shows: an offer to try it with the project's own sample invoices,
// then a few first requests to make. Dismissable; never shown once the stack has documents.
import { useState } from 'preact/hooks';
import { currentStackId } from '../stacks/stacks.ts';
import type { Uploader } from '../connection/useUploads.ts';
import { addSampleDocuments } from './samples.ts';

export const SUGGESTIONS = ['Extract these invoices into a table', 'Chart totals by vendor', 'Open the terminal and list my files'] as const;

const dismissedKey = () => `stackdocs:first-run-dismissed:${currentStackId()}`;

export type FirstRunPhase = 'offer' | 'adding' | 'added' | 'failed';

/**
 * `phase` lives with the caller: adding the samples gives the stack documents, which would end the
 * offer, and the suggestions must stay after it.
 */
export function FirstRun({ uploader, phase, setPhase, onSuggest }: { uploader: Uploader; phase: FirstRunPhase; setPhase(phase: FirstRunPhase): void; onSuggest(text: string): void }) {
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(dismissedKey()) === '1');
  if (dismissed) return null;
  const dismiss = () => {
    localStorage.setItem(dismissedKey(), '1');
    setDismissed(true);
  };
  const addSamples = async () => {
    setPhase('adding');
    try {
      await addSampleDocuments(uploader);
      setPhase('added');
    } catch {
      setPhase('failed');
    }
  };
  return (
    <section class="first-run" aria-label="Getting started">
      {phase === 'added' ? (
        <>
          <p>Three sample invoices are in documents/. Try asking:</p>
          <ul class="first-run-suggestions">
            {SUGGESTIONS.map((text) => (
              <li key={text}>
                <button type="button" class="button" onClick={() => onSuggest(text)}>
                  {text}
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <>
          <p>New here? Add three sample invoices (two PDFs and a scanned receipt) and see what your computer does with them.</p>
          <button type="button" class="button button--primary" disabled={phase === 'adding'} onClick={() => void addSamples()}>
            {phase === 'adding' ? 'Adding the samples…' : 'Try it with sample documents'}
          </button>
          {phase === 'failed' && <p role="alert">The samples could not be loaded. Reload the page and try again.</p>}
        </>
      )}
      <button type="button" class="first-run-dismiss" aria-label="Dismiss getting started" onClick={dismiss}>
        ×
      </button>
    </section>
  );
}
