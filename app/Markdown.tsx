// Renders untrusted Markdown (the model's, a document's) as sanitised HTML.
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { memo } from 'preact/compat';

export const Markdown = memo(function Markdown({ text, className }: { text: string; className?: string }) {
  const html = DOMPurify.sanitize(marked.parse(text, { async: false, gfm: true, breaks: true }));
  return <div class={className ? `markdown ${className}` : 'markdown'} dangerouslySetInnerHTML={{ __html: html }} />;
});
