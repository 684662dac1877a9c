// Every end-to-end test's `test`: Playwright's, with one check added to each test, that the page
// never broke its Content-Security-Policy (the build's meta tag): a violation is either an attack
// the policy stopped or a feature the policy breaks, and both must be seen.
import { test as base, expect, type Page } from '@playwright/test';

export * from '@playwright/test';

export const test = base.extend<{ contentSecurityPolicyHolds: void }>({
  contentSecurityPolicyHolds: [
    async ({ context }, use, testInfo) => {
      const violations: string[] = [];
      const watch = (page: Page) =>
        page.on('console', (message) => {
          if (message.type() === 'error' && message.text().includes('Content Security Policy')) violations.push(message.text());
        });
      context.pages().forEach(watch);
      context.on('page', watch);
      await use();
      // A test that provokes a violation on purpose says so by its annotation.
      if (!testInfo.annotations.some((note) => note.type === 'csp-violation-expected')) {
        expect(violations, 'Content-Security-Policy violations').toEqual([]);
      }
    },
    { auto: true },
  ],
});
