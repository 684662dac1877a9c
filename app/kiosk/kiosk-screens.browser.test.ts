// What a visitor sees on a kiosk, in Chromium: no way towards Settings (the kiosk has none to
// open), no dialog for files shared from the OS (they are dropped), and a computer chip that
// opens no terminal when the owner hid it. The store and the kiosk's settings are stand-ins: the
// page reads them once as it loads, and the real store needs React's hooks.
import { h, render } from 'preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StackClient } from '../connection/stack-client.ts';
import { StackClientContext } from '../connection/stack-context.ts';

const state = vi.hoisted(() => ({
  view: {
    model: { state: 'not_configured', message: 'No model connected: enter your Anthropic API key in Settings, or choose the Stackdocs proxy or a local model server there.' },
    computer: { state: 'ready', detail: '' },
    documents: {},
    demo: null,
    activeMissions: [],
  },
  settingsOpen: false,
  setSettingsOpen(open: boolean) {
    state.settingsOpen = open;
  },
}));

vi.mock('../connection/store.ts', () => ({ useAppStore: (select: (s: typeof state) => unknown) => select(state) }));
vi.mock('./kiosk.ts', async (original) => ({
  ...(await original<typeof import('./kiosk.ts')>()),
  PAGE_KIOSK: { stack: 's-kiosk', salt: '', hash: '', iterations: 1, idle_ms: 60_000, daily_reset: null, allow_terminal: false, failures: 0, locked_until: 0 },
  TERMINAL_HIDDEN: true,
}));

const root = document.createElement('div');
document.body.append(root);
afterEach(() => render(null, root));

const calls: string[] = [];
const client = { stackId: 's-kiosk', call: async (method: string) => void calls.push(method) } as unknown as StackClient;
const withClient = (child: preact.ComponentChildren) => h(StackClientContext.Provider, { value: client }, child);

describe('a kiosk shows a visitor only its own screens', () => {
  it('says the assistant cannot answer, without the Settings a visitor has no way into', async () => {
    const { ModelBanner } = await import('../chat/ModelBanner.tsx');
    render(withClient(h(ModelBanner, { uploader: { upload: async () => {} } as never })), root);
    const banner = root.querySelector('.model-banner')!;
    expect(banner.textContent).toContain('The assistant cannot answer right now');
    expect(banner.textContent).toContain('This kiosk cannot reach its model. Please let the staff know.');
    expect(banner.textContent).not.toContain('Settings');
    expect([...banner.querySelectorAll('button')].map((button) => button.textContent)).toEqual(['Play the recorded demo']);
  });

  it('drops files shared from the OS unseen, and keeps none of them', async () => {
    const { SHARE_CACHE } = await import('../pwa/launch-files.ts');
    const { SharedFilesDialog } = await import('../pwa/SharedFilesDialog.tsx');
    const id = `${Date.now().toString(36)}-kiosk`;
    const cache = await caches.open(SHARE_CACHE);
    const key = new URL(`share/${id}/0`, document.baseURI).href;
    await cache.put(key, new Response('passport scan', { headers: { 'x-file-name': 'passport.txt' } }));
    const taken: string[] = [];
    render(h(SharedFilesDialog, { id, currentStack: 's-kiosk', taker: { upload: (files) => void taken.push(...files.map((f) => f.name)), openStackFile: () => {} } }), root);
    await expect.poll(async () => Boolean(await cache.match(key))).toBe(false);
    expect(root.querySelector('dialog')).toBeNull();
    expect(document.querySelector('dialog[open]')).toBeNull();
    expect(taken).toEqual([]);
  });

  it('the computer chip opens no terminal the owner hid', async () => {
    const { ComputerChip } = await import('../computer/ComputerChip.tsx');
    render(withClient(h(ComputerChip, {})), root);
    expect(root.textContent).toContain('Computer:');
    expect(root.querySelector('button')).toBeNull();
  });
});
