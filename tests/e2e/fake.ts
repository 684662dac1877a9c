// Drives the scripted model from a test, over its admin routes.
import type { FakeScript } from '../../worker/agent/scripted/script.ts';
import type { FakeState } from '../fake-model/server.ts';

function fakeUrl(): string {
  const url = process.env.E2E_FAKE_URL;
  if (!url) throw new Error('E2E_FAKE_URL is not set: run the tests through playwright.config.ts');
  return url;
}

export async function loadScript(script: FakeScript): Promise<void> {
  const response = await fetch(`${fakeUrl()}/_fake/script`, { method: 'POST', body: JSON.stringify(script) });
  if (!response.ok) throw new Error(`fake model refused the script: ${await response.text()}`);
}

export async function fakeState(): Promise<FakeState> {
  return (await fetch(`${fakeUrl()}/_fake/state`)).json() as Promise<FakeState>;
}
