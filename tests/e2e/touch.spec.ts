// Touch screens and small ones: a kiosk's 800x1280 portrait panel and a Chromebook's 1366x768,
// both with touch. By finger only (CDP touch events, one and two points): make a window, drag it
// by its title, resize it by its corner, pinch the canvas to zoom, send a chat message. Inputs
// are large enough not to make a phone zoom (16 px), and axe finds nothing serious.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type CDPSession, type Page } from './test.ts';
import { openApp, send } from './app.ts';

type Point = { x: number; y: number };

/** Moves fingers from `from` by `by` (one vector per finger), in steps, as a touch screen reports it. */
async function touchMove(cdp: CDPSession, from: Point[], by: Point[], steps = 12): Promise<void> {
  const at = (t: number) => from.map((p, i) => ({ x: p.x + by[i]!.x * t, y: p.y + by[i]!.y * t, id: i, radiusX: 4, radiusY: 4, force: 1 }));
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0) });
  for (let step = 1; step <= steps; step++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(step / steps) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

async function box(page: Page, selector: string) {
  const found = await page.locator(selector).first().boundingBox();
  if (!found) throw new Error(`${selector} is not on screen`);
  return found;
}

const zoomOf = (page: Page) => page.locator('.react-flow__viewport').evaluate((el) => new DOMMatrix(getComputedStyle(el).transform).a);

for (const size of [
  { width: 800, height: 1280, name: 'an 800x1280 touch panel' },
  { width: 1366, height: 768, name: 'a 1366x768 touch Chromebook' },
]) {
  test.describe(size.name, () => {
    test.use({ viewport: { width: size.width, height: size.height }, hasTouch: true, isMobile: size.width < 1000 });

    test('by touch: a window is made, dragged, resized; the canvas pinch-zooms; a message is sent; no serious a11y violations', async ({ page }) => {
      await openApp(page);
      const cdp = await page.context().newCDPSession(page);
      await page.getByRole('button', { name: 'Add a window' }).tap();
      await page.getByRole('menuitem', { name: /Notes/ }).tap();
      const frame = '.react-flow__node';
      await expect(page.locator(frame)).toHaveCount(1);

      // Dragged by its title bar.
      const before = await box(page, frame);
      const title = await box(page, '.window-title');
      // Down, and sideways within the canvas (narrow beside the chat on the portrait panel).
      const sideways = size.width < 1000 ? -24 : 120;
      await touchMove(cdp, [{ x: title.x + 20, y: title.y + title.height / 2 }], [{ x: sideways, y: 160 }]);
      const moved = await box(page, frame);
      expect(Math.abs(moved.x - before.x - sideways)).toBeLessThan(32);
      expect(moved.y - before.y).toBeGreaterThan(120);

      // Selected by a tap, then resized by its corner handle, which is big enough for a finger.
      await page.locator('.window-titlebar').first().tap();
      const handle = await box(page, '.window-resize-handle.bottom.right');
      expect(Math.min(handle.width, handle.height)).toBeGreaterThanOrEqual(20);
      await touchMove(cdp, [{ x: handle.x + handle.width / 2, y: handle.y + handle.height / 2 }], [{ x: 90, y: 70 }]);
      const resized = await box(page, frame);
      expect(resized.width - moved.width).toBeGreaterThan(50);
      expect(resized.height - moved.height).toBeGreaterThan(40);

      // Two fingers apart on an empty part of the canvas: it zooms in.
      const pane = await box(page, '.react-flow__pane');
      const centre = { x: pane.x + pane.width / 2, y: pane.y + pane.height * 0.75 };
      const zoom = await zoomOf(page);
      await touchMove(cdp, [{ x: centre.x - 30, y: centre.y }, { x: centre.x + 30, y: centre.y }], [{ x: -70, y: 0 }, { x: 70, y: 0 }]);
      expect(await zoomOf(page)).toBeGreaterThan(zoom * 1.3);

      // The chat, reachable and large enough to type in without the page zooming.
      const message = page.getByRole('textbox', { name: 'Message' });
      await expect(message).toBeInViewport();
      expect(await message.evaluate((el) => parseFloat(getComputedStyle(el).fontSize))).toBeGreaterThanOrEqual(16);
      await message.tap();
      await send(page, 'hello from a touch screen');
      await expect(page.locator('[data-role=user]').last()).toHaveText('hello from a touch screen');

      const results = await new AxeBuilder({ page }).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    });
  });
}
