// Files shared to the app from the OS's share sheet: which stack do they go to? The open one by
// default; another opens in this tab and takes them there. Offline too: the files wait in the
// service worker's cache until placed (app/pwa/launch-files.ts). A kiosk takes none.
import { useEffect, useRef, useState } from 'preact/hooks';
import { PAGE_KIOSK } from '../kiosk/kiosk.ts';
import { forgetShare, sharedFiles, takeFiles, withoutShare, type FileTaker } from './launch-files.ts';
import { listStacks } from '../stacks/stacks.ts';

export function SharedFilesDialog(props: { id: string; currentStack: string; taker: FileTaker }) {
  return PAGE_KIOSK ? <DropShare id={props.id} /> : <ShareDialog {...props} />;
}

/**
 * On a kiosk the share is dropped unseen: a visitor gets no screen but the kiosk's own (this one
 * lists every stack of the browser), and files kept for a later visitor would outlive the reset.
 */
function DropShare({ id }: { id: string }) {
  useEffect(() => {
    void forgetShare(id).catch(() => {});
    history.replaceState(history.state, '', withoutShare());
  }, [id]);
  return null;
}

function ShareDialog({ id, currentStack, taker }: { id: string; currentStack: string; taker: FileTaker }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [files, setFiles] = useState<File[] | null>(null);
  const [target, setTarget] = useState(currentStack);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const stacks = listStacks();

  const finish = async (place: File[] | null) => {
    if (place) takeFiles(place, taker);
    await forgetShare(id).catch(() => {});
    history.replaceState(history.state, '', withoutShare());
    setDone(true);
  };

  useEffect(() => {
    sharedFiles(id).then(
      (found) => {
        // Chosen already (another stack was picked, and this tab opened it to take them).
        if (new URLSearchParams(location.search).get('add') === '1' && found.length) void finish(found);
        else setFiles(found);
      },
      (failure: unknown) => setError(`The shared files could not be read: ${failure instanceof Error ? failure.message : String(failure)}`),
    );
  }, [id]);

  useEffect(() => {
    if (!done && (files || error) && !dialog.current?.open) dialog.current?.showModal();
  }, [files, error, done]);

  if (done || (!files && !error)) return null;
  const add = () => {
    if (!files) return;
    if (target === currentStack) {
      void finish(files);
      return;
    }
    const url = new URL(location.href);
    url.searchParams.set('stack', target);
    url.searchParams.set('add', '1');
    location.assign(url.href);
  };
  return (
    <dialog ref={dialog} class="settings stack-dialog" aria-labelledby="share-title" onCancel={(event) => { event.preventDefault(); void finish(null); }}>
      <h2 id="share-title">{files?.length ? `Shared with Stackdocs: ${files.length === 1 ? files[0]!.name : `${files.length} files`}` : 'Shared with Stackdocs'}</h2>
      {error && (
        <p class="settings-error" role="alert">
          {error}
        </p>
      )}
      {files && files.length === 0 && <p>These files were already added, or are no longer here.</p>}
      {files && files.length > 1 && (
        <ul>
          {files.map((file, i) => (
            <li key={i}>{file.name}</li>
          ))}
        </ul>
      )}
      {files && files.length > 0 && (
        <label>
          Add to
          <select value={target} onChange={(event) => setTarget(event.currentTarget.value)}>
            {stacks.map((stack) => (
              <option key={stack.id} value={stack.id}>
                {stack.name}
                {stack.id === currentStack ? ' (open now)' : ''}
              </option>
            ))}
          </select>
        </label>
      )}
      <div class="settings-actions">
        <button type="button" class="button" onClick={() => void finish(null)}>
          {files?.length ? 'Discard' : 'Close'}
        </button>
        {files && files.length > 0 && (
          <button type="button" class="button button--primary" onClick={add}>
            Add
          </button>
        )}
      </div>
    </dialog>
  );
}
