// The heartbeat on the real app, its timer in the stack worker on the real clock (a minute apart):
// a beat answered HEARTBEAT_OK leaves no trace in the chat; a beat with
// something to say shows as a check-in with its message, and stays after a reload. Each beat
// carries the user's checklist.
import { expect, test } from './test.ts';
import { openApp } from './app.ts';
import { fakeState, loadScript } from './fake.ts';

test('heartbeat: an all-clear beat leaves no trace; a beat with work shows and stays', async ({ page }) => {
  test.setTimeout(5 * 60_000);
  await openApp(page);
  await loadScript({
    name: 'heartbeat',
    turns: [{ reply: { content: [{ type: 'text', text: 'HEARTBEAT_OK' }] } }, { reply: { content: [{ type: 'text', text: 'Reminder: the Acme invoice is due tomorrow.' }] } }],
  });
  const settings = async (change: () => Promise<void>) => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await change();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(page.getByRole('dialog')).toBeHidden();
  };

  // The checklist, then a beat a minute, with quiet hours around now (the browser's local time).
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('textbox', { name: 'Heartbeat checklist' }).fill('- Invoices due tomorrow: remind me');
  await page.getByRole('button', { name: 'Apply checklist' }).click();
  await expect(page.getByRole('region', { name: 'Heartbeat checklist' }).getByRole('status')).toHaveText('Saved: the next beat reads it.');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  // Quiet hours are held on a fake clock in worker/heartbeat.test.ts; here they are set and then
  // cleared, so the beats below also prove a cleared setting lets them through.
  const quiet = await page.evaluate(() => {
    const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 5);
    return { from: clock(Date.now() - 3_600_000), to: clock(Date.now() + 3_600_000) };
  });
  await settings(async () => {
    await page.getByLabel('Quiet from').fill(quiet.from);
    await page.getByLabel('Quiet until').fill(quiet.to);
  });
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await expect(page.getByLabel('Quiet from')).toHaveValue(quiet.from);
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await settings(async () => {
    await page.getByRole('spinbutton', { name: /Heartbeat/ }).fill('1');
    await page.getByLabel('Quiet from').fill('');
    await page.getByLabel('Quiet until').fill('');
  });
  // The first beat: the all-clear. It leaves nothing in the chat.
  await expect.poll(async () => (await fakeState()).requests.length, { timeout: 100_000 }).toBe(1);
  expect(JSON.stringify((await fakeState()).requests[0]!.body)).toContain('Invoices due tomorrow: remind me');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden({ timeout: 30_000 });
  await expect(page.locator('[data-role=notice], [data-role=assistant], [data-role=usage]')).toHaveCount(0);

  // The second: something to say. It shows, and stays after a reload; the all-clear never does.
  await expect(page.locator('[data-role=assistant]')).toHaveText(['Reminder: the Acme invoice is due tomorrow.'], { timeout: 100_000 });
  await settings(async () => void (await page.getByRole('spinbutton', { name: /Heartbeat/ }).fill('0')));
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.locator('[data-role=assistant]')).toHaveText(['Reminder: the Acme invoice is due tomorrow.']);
  await expect(page.locator('[data-role=notice]')).toHaveText(['Scheduled check-in (heartbeat).']);
  expect((await fakeState()).failures).toEqual([]);
});
