import { convert } from 'html-to-text';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { z } from 'zod';
import { runBounded } from './bounded';
import { defineTool } from './types';

export const markdownTool = defineTool({
  name: 'markdown',
  description: 'Markdown: render to safe HTML, convert to plain text, or list the headings.',
  input: z.object({ op: z.enum(['to_html', 'to_text', 'headings']), text: z.string().max(50_000) }),
  run({ op, text }) {
    return runBounded(() => {
      if (op === 'headings') {
        return {
          headings: marked
            .lexer(text)
            .flatMap((t) => (t.type === 'heading' ? [{ level: t.depth as number, text: t.text as string }] : []))
            .slice(0, 200),
        };
      }
      const html = sanitizeHtml(marked.parse(text, { async: false }));
      if (op === 'to_html') return { html };
      return { text: convert(html, { wordwrap: false }) };
    }, 500);
  },
});
