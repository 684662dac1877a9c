// A stack from elsewhere, across the top while it is restricted: it shows everything and runs or
// sends nothing it brought until its owner reviews what it would enable, each item on its own.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { TrustItem, TrustState } from '../../protocol/trust.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';

const FROM: Record<TrustState['origin'], string> = {
  stack_file: 'This stack came from a file.',
  template_file: 'This stack came from a template file.',
};

export function TrustBanner() {
  const trust = useAppStore((state) => state.view.trust);
  const [reviewing, setReviewing] = useState(false);
  if (!trust) return null;
  return (
    <>
      {trust.restricted && (
        <div class="trust-banner" role="status" aria-label="Restricted stack">
          <strong>{FROM[trust.origin]}</strong>{' '}
          <span>It can't run anything or send anything anywhere until you review it.</span>{' '}
          <button type="button" class="button" onClick={() => setReviewing(true)}>
            Review…
          </button>
        </div>
      )}
      {reviewing && <TrustReview trust={trust} onClose={() => setReviewing(false)} />}
    </>
  );
}

/** The stack's review, also opened from Settings once done; `onClose` after an answer or a cancel. */
export function TrustReview({ trust, onClose }: { trust: TrustState; onClose(): void }) {
  const client = useStackClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const [answers, setAnswers] = useState<Record<string, boolean>>(() => Object.fromEntries(trust.items.map((item) => [item.id, item.allowed === true])));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
  }, []);

  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      await client.call('review_trust', { decisions: answers });
      onClose();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  const from = trust.file_name ? `“${trust.file_name}”` : 'a file';
  return (
    <dialog ref={dialog} class="settings trust-review" aria-labelledby="trust-review-title" onCancel={(event) => (busy ? event.preventDefault() : onClose())}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <h2 id="trust-review-title">Review this stack</h2>
        <p>
          It came from {from} on {new Date(trust.arrived_at).toLocaleDateString()}. Its documents, conversation, canvas and files are here to read. What it
          would also do is listed below, exactly; nothing of it runs until you switch it on.
        </p>
        {trust.items.length === 0 ? (
          <p>It brought nothing that runs or sends anything: nothing to switch on.</p>
        ) : (
          <ul class="trust-items">
            {trust.items.map((item) => (
              <TrustRow key={item.id} item={item} allowed={answers[item.id] === true} disabled={busy} onChange={(allowed) => setAnswers({ ...answers, [item.id]: allowed })} />
            ))}
          </ul>
        )}
        {error && (
          <p class="settings-error" role="alert">
            {error}
          </p>
        )}
        <div class="settings-actions">
          <button type="button" class="button" onClick={onClose} disabled={busy}>
            Not now
          </button>
          <button type="submit" class="button button--primary" disabled={busy}>
            {busy ? 'Saving…' : Object.values(answers).some(Boolean) ? 'Allow what is switched on' : 'Keep everything off'}
          </button>
        </div>
      </form>
    </dialog>
  );
}

function TrustRow({ item, allowed, disabled, onChange }: { item: TrustItem; allowed: boolean; disabled: boolean; onChange(allowed: boolean): void }) {
  return (
    <li class="trust-item" data-kind={item.kind}>
      <label>
        <input type="checkbox" role="switch" checked={allowed} disabled={disabled} onChange={(event) => onChange(event.currentTarget.checked)} />
        <span>{item.title}</span>
      </label>
      <code>{item.detail}</code>
    </li>
  );
}

/** Settings' line on where a stack from elsewhere came from, with its review to change answers. */
export function TrustSection() {
  const trust = useAppStore((state) => state.view.trust);
  const [reviewing, setReviewing] = useState(false);
  if (!trust) return null;
  const allowed = trust.items.filter((item) => item.allowed === true).length;
  return (
    <section class="rules" aria-labelledby="trust-title">
      <h3 id="trust-title">Where this stack came from</h3>
      <p>
        {FROM[trust.origin]} {trust.restricted ? 'Not reviewed yet: nothing it brought runs or sends.' : `Reviewed: ${allowed} of ${trust.items.length} things it brought are allowed.`}
      </p>
      <button type="button" class="button" onClick={() => setReviewing(true)}>
        Review…
      </button>
      {reviewing && <TrustReview trust={trust} onClose={() => setReviewing(false)} />}
    </section>
  );
}
