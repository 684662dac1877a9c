// Remote MCP servers, end to end: the user adds one by its URL in Settings, the app reaches it
// through the proxy (whose owner allows that host: the suite's test register on loopback), its
// tools are listed, and the scripted model calls one after the user allows it. A server on a host
// the owner did not allow is refused by the proxy, and Settings says so. (MCP servers in the
// computer, over stdio: computer.spec.ts.)
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import { expect, test } from './test.ts';

test('a remote MCP server through the proxy: listed in Settings, asked about once, called; a host not allowed is refused', async ({ page }) => {
  test.setTimeout(120_000);
  await openApp(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  const section = page.getByRole('region', { name: 'MCP servers' });
  const add = async (name: string, url: string) => {
    await section.getByLabel('Server name').fill(name);
    await section.getByLabel('Command or URL').fill(url);
    await section.getByRole('button', { name: 'Add server' }).click();
    await expect(section.getByRole('status')).toHaveText(`Added ${name}: it starts now.`);
  };
  await add('register', process.env.E2E_MCP_URL!);
  const register = section.getByRole('listitem', { name: 'MCP server register' });
  await expect(register.locator('.mcp-state')).toHaveText('Running', { timeout: 30_000 });
  await expect(register).toContainText('(remote)');
  await expect(register.getByRole('list', { name: 'Tools of register' })).toContainText('vat_number');

  await add('elsewhere', process.env.E2E_OTHER_MCP_URL!);
  const elsewhere = section.getByRole('listitem', { name: 'MCP server elsewhere' });
  await expect(elsewhere.locator('.mcp-state')).toHaveText('Stopped', { timeout: 30_000 });
  await expect(elsewhere).toContainText(`${new URL(process.env.E2E_OTHER_MCP_URL!).host} is not one of the MCP servers this proxy's owner allows`);
  await elsewhere.getByRole('button', { name: 'Turn off' }).click();
  await expect(section.getByRole('status')).toHaveText('Turned elsewhere off.');
  await expect(elsewhere.locator('.mcp-state')).toHaveText('Turned off');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await loadScript({
    name: 'remote mcp',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'mcp__register__vat_number', input: { company: 'Initech' } }] } },
      {
        expect: { tool_result: { contains: 'Initech: GB', is_error: false } },
        reply: { content: [{ type: 'tool_use', name: 'mcp__register__fail', input: {} }] },
      },
      {
        expect: { tool_result: { contains: 'the register is closed today', is_error: true } },
        reply: { content: [{ type: 'text', text: 'Initech is registered; the register is closed for the rest.' }] },
      },
    ],
  });
  await send(page, "what is Initech's VAT number?");
  const prompts = page.getByRole('group', { name: 'Permission request' });
  for (const n of [1, 2]) {
    await expect(prompts).toHaveCount(n, { timeout: 30_000 });
    await expect(prompts.last()).toContainText('A tool of an MCP server you connected');
    await prompts.last().getByRole('button', { name: 'Allow', exact: true }).click();
  }
  await expect(assistant(page).last()).toHaveText('Initech is registered; the register is closed for the rest.', { timeout: 60_000 });
  expect((await fakeState()).failures).toEqual([]);
  await expect(page.locator('[data-role=tool]').filter({ hasText: 'Asking register: vat_number' })).toBeVisible();
});
