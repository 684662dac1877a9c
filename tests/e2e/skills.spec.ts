// Skills on the real app: two ship with it; one installed from a folder (shown first, with the
// tools it uses) reaches the next system prompt by name and description only; the model loads it,
// follows it, and a tool it uses still asks when the user's rules say so (a web address the user
// did not give), whatever the skill says.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './test.ts';
import { openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';

const SKILL = `---
name: weekly-report
description: Write the weekly spending report from this week's invoices, with this week's exchange rates.
allowed-tools: write, web_fetch
---
1. Write artifacts/weekly-report.md, starting from template.md.
2. Fetch this week's rates from http://rates.example.test/latest and add them.
`;

test('a skill installed from a folder is listed by description, loaded when relevant, followed, and grants nothing', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'stackdocs-skill-'));
  try {
    mkdirSync(join(dir, 'weekly-report'));
    writeFileSync(join(dir, 'weekly-report', 'SKILL.md'), SKILL);
    writeFileSync(join(dir, 'weekly-report', 'template.md'), '# Week {{n}}\n');
    await openApp(page);
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const section = page.getByRole('region', { name: 'Skills' });
    await expect(section.getByRole('list', { name: 'Skills' }).getByRole('listitem')).toHaveCount(2);
    await section.getByLabel('Skill folder to install').setInputFiles(join(dir, 'weekly-report'));
    const preview = section.getByRole('group', { name: 'Install skill weekly-report?' });
    await expect(preview).toContainText('Tools it uses: write, web_fetch (each still asks as your rules say). Other files: template.md.');
    await expect(preview).toContainText('2. Fetch this week');
    await preview.getByRole('button', { name: 'Install' }).click();
    await expect(section.getByRole('status')).toHaveText('Installed "weekly-report": the agent sees it from your next message.');
    await expect(section.getByRole('list', { name: 'Skills' }).getByRole('listitem')).toHaveCount(3);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await loadScript({
      name: 'skill',
      turns: [
        { reply: { content: [{ type: 'tool_use', name: 'load_skill', input: { name: 'weekly-report' } }] } },
        {
          expect: { tool_result: { contains: '1. Write artifacts/weekly-report.md, starting from template.md.' } },
          reply: { content: [{ type: 'tool_use', name: 'load_skill', input: { name: 'weekly-report', file: 'template.md' } }] },
        },
        {
          expect: { tool_result: { contains: '# Week {{n}}' } },
          reply: { content: [{ type: 'tool_use', name: 'write', input: { path: 'artifacts/weekly-report.md', content: '# Week 48\n' } }] },
        },
        {
          expect: { tool_result: { contains: 'Wrote', is_error: false } },
          reply: { content: [{ type: 'tool_use', name: 'web_fetch', input: { url: 'http://rates.example.test/latest' } }] },
        },
        {
          expect: { tool_result: { contains: 'Not run', is_error: true } },
          reply: { content: [{ type: 'text', text: 'The report is written; the rates need your go-ahead.' }] },
        },
      ],
    });
    await send(page, 'do the weekly report');
    // The skill's own words do not let the fetch through: the user is asked, and says no.
    const ask = page.getByRole('group', { name: 'Permission request' });
    await expect(ask).toContainText('rates.example.test');
    await ask.getByRole('button', { name: 'Don’t allow' }).click();
    await expect(page.locator('[data-role=assistant]').last()).toHaveText('The report is written; the rates need your go-ahead.');
    const state = await fakeState();
    expect(state.failures).toEqual([]);
    const system = JSON.stringify((state.requests[0]!.body as { system: unknown }).system);
    expect(system).toContain('- weekly-report: Write the weekly spending report');
    expect(system).toContain('- invoice-to-table: ');
    expect(system).not.toContain('Fetch this week');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
