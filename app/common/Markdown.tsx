// Renders untrusted Markdown (the model's, a document's, a note's) as sanitised HTML.
import DOMPurify, { type Config } from 'dompurify';
import { Marked } from 'marked';
import { memo } from 'preact/compat';

// A task list's box as a character: an <input> would be a form control, which text may not carry.
const marked = new Marked({ gfm: true, breaks: true, renderer: { checkbox: ({ checked }) => (checked ? '\u2611 ' : '\u2610 ') } });

/**
 * What the text may become. Plain HTML only (no SVG or MathML, whose parsing quirks are where
 * sanitisers slip). No <style>, `style` or `class`: the app's own classes and styles are the
 * page's, and text that restyled them could move or relabel its buttons ("Allow" for "Deny").
 * No form controls, no <dialog> (it floats over the app when open), no id or name (they clobber
 * the page's globals). Links go only to http(s) and mailto addresses, and open apart from the app.
 */
const CONFIG: Config = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'select', 'option', 'optgroup', 'textarea', 'label', 'fieldset', 'legend', 'datalist', 'output', 'meter', 'progress', 'dialog'],
  FORBID_ATTR: ['style', 'class', 'id', 'name', 'form', 'formaction', 'action', 'method', 'autofocus', 'tabindex', 'accesskey', 'popover', 'popovertarget', 'popovertargetaction', 'contenteditable'],
  ALLOW_DATA_ATTR: false,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};

// An instance of its own, so its hook touches no other use of DOMPurify.
const purify = DOMPurify(window);
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** The sanitised HTML of `text`, as the Markdown component shows it. */
export function markdownHtml(text: string): string {
  return purify.sanitize(marked.parse(text, { async: false }), CONFIG);
}

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  return <div class={className ? `markdown ${className}` : 'markdown'} dangerouslySetInnerHTML={{ __html: markdownHtml(text) }} />;
});
