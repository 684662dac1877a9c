// Every end-to-end test's `test`: Playwright's, with one check added to each test, that the page
// and its workers never broke their Content-Security-Policy (the build's meta tag; the header the
// service worker serves, which each worker's entry reports refusals of to the console): a
// violation is either an attack the policy stopped or a feature the policy breaks, and both must
// be seen. A test that fails
// carries what the scripted model was asked and the pages' console errors, so a failure seen only
// in CI can be read afterwards.
import { test as base, expect, type Page } from '@playwright/test';
import { fakeState } from './fake.ts';

export * from '@playwright/test';

export const test = base.extend<{ contentSecurityPolicyHolds: void }>({
  contentSecurityPolicyHolds: [
    async ({ context }, use, testInfo) => {
      const violations: string[] = [];
      const errors: string[] = [];
      const watch = (page: Page) => {
        page.on('console', (message) => {
          if (message.type() !== 'error' && message.type() !== 'warning') return;
          errors.push(`${new Date().toISOString()} ${message.type()}: ${message.text()}`);
          if (message.type() === 'error' && message.text().includes('Content Security Policy')) violations.push(message.text());
        });
        page.on('pageerror', (error) => errors.push(`${new Date().toISOString()} pageerror: ${error.message}`));
      };
      context.pages().forEach(watch);
      context.on('page', watch);
      await use();
      if (testInfo.status !== testInfo.expectedStatus) {
        const model = await fakeState().catch((error: Error) => ({ unavailable: error.message }));
        const summary = 'requests' in model
          ? { ...model, requests: model.requests.map(({ n, path, turn, aborted, body }) => ({ n, path, turn, aborted, last: lastUserText(body) })) }
          : model;
        await testInfo.attach('fake-model.json', { body: JSON.stringify(summary, null, 2), contentType: 'application/json' });
        await testInfo.attach('console-errors.txt', { body: errors.join('\n') || '(none)', contentType: 'text/plain' });
        console.log(`fake model at failure: ${JSON.stringify(summary).slice(0, 4000)}\nconsole errors:\n${errors.slice(-30).join('\n')}`);
      }
      // A test that provokes a violation on purpose says so by its annotation.
      if (!testInfo.annotations.some((note) => note.type === 'csp-violation-expected')) {
        expect(violations, 'Content-Security-Policy violations').toEqual([]);
      }
    },
    { auto: true },
  ],
});

/** The last user message's text of a Messages request body, to tell requests apart in a log. */
function lastUserText(body: unknown): string | null {
  const messages = (body as { messages?: { role: string; content: unknown }[] } | null)?.messages;
  const last = messages?.filter((m) => m.role === 'user').at(-1);
  if (!last) return null;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  return text.slice(0, 200);
}
