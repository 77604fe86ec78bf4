/**
 * The quick start: the key, then one lookup, one SQL query and the MCP endpoint, each runnable as
 * shown (the key is filled in once it is on the page; otherwise a placeholder).
 */
import { h } from '../dom.ts';

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function quickStart(key: string | undefined): HTMLElement {
  const origin = location.origin;
  const token = key ?? '<YOUR_KEY>';
  const sql = JSON.stringify({ sql: 'SELECT title FROM gutenberg LIMIT 5' });
  const steps: [string, string][] = [
    ['Your key', `export UDA_KEY=${shellQuote(token)}`],
    ['A lookup', `curl -H "Authorization: Bearer $UDA_KEY" ${origin}/books/the%20art%20of%20war`],
    ['A SQL query', `curl -H "Authorization: Bearer $UDA_KEY" -H 'content-type: application/json' \\\n  -d ${shellQuote(sql)} ${origin}/api/v1/query`],
    ['The MCP endpoint', `${origin}/mcp   (Streamable HTTP; header Authorization: Bearer $UDA_KEY)`],
  ];
  return h(
    'section',
    { class: 'quick-start', 'aria-labelledby': 'qs-title' },
    h('h2', { id: 'qs-title' }, 'Quick start'),
    ...steps.flatMap(([title, text]) => [h('h3', {}, title), h('pre', {}, h('code', {}, text))]),
  );
}
