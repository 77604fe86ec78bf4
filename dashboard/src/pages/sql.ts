/**
 * The SQL console: a SELECT against the public tables and the user's ready sheets, with the same
 * rules and billing as POST /api/v1/query (the session route runs that route's own handler). Shows
 * rows, `truncated`, the cost and whether the result was cached; a table browser; and "copy as"
 * snippets with the key left as a placeholder.
 */
import type { QueryResponseBody as QueryAnswer } from '@uda/api/sql/schema';
import type { TablesAnswer } from '@uda/api/session/schemas';
import { call, messageOf } from '../api.ts';
import { h, replace, status, table } from '../dom.ts';
import { shellQuote } from './quick-start.ts';
import { formatCell } from './sheets.ts';

type Tables = Omit<TablesAnswer, 'status'>;

export async function sqlPage(): Promise<HTMLElement> {
  const feedback = status();
  const resultArea = h('div');
  const snippetArea = h('div');
  const tablesAnswer = await call<Tables>('/tables');
  const catalog: Tables = tablesAnswer.ok ? tablesAnswer.body : { tables: [], sheets: [] };
  const editor = h('textarea', { id: 'sql', rows: 6, spellcheck: 'false' });
  editor.value = 'SELECT title, authors FROM gutenberg LIMIT 5';
  /** The sheets the SQL names (by table name), as `datasetIds` slugs: only those are loaded for the query. */
  const sheetsIn = (sql: string) => catalog.sheets.filter((s) => sql.toLowerCase().includes(s.table.toLowerCase())).map((s) => s.slug);
  const snippets = () => replace(snippetArea, ...snippetsFor(editor.value, sheetsIn(editor.value)));

  const run = async (event: Event) => {
    event.preventDefault();
    feedback.say('Running…');
    const answer = await call<QueryAnswer>('/query', { json: { sql: editor.value, datasetIds: sheetsIn(editor.value) } });
    snippets();
    if (!answer.ok) {
      replace(resultArea);
      return feedback.say(messageOf(answer), 'error');
    }
    feedback.say(`${answer.body.row_count} rows.`);
    replace(resultArea, ...queryResult(answer.body, answer.headers));
  };

  snippets();
  return h(
    'section',
    { 'aria-labelledby': 'sql-title', class: 'console' },
    tableBrowser(catalog, editor),
    h(
      'div',
      {},
      h('h1', { id: 'sql-title' }, 'SQL console'),
      h('p', {}, 'One SELECT over the public tables and your ready sheets. Same rules and prices as POST /api/v1/query: a repeat within 5 minutes is cached and free.'),
      h('form', { onsubmit: run }, h('label', { for: 'sql' }, 'SQL'), editor, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Run query'))),
      feedback,
      resultArea,
      h('h2', {}, 'Copy as'),
      snippetArea,
    ),
  );
}

/** "Copy as": the query as curl, DuckDB and an MCP client config, with the key left as a placeholder. */
function snippetsFor(sql: string, datasets: readonly string[]): HTMLElement[] {
  const origin = location.origin;
  const body = JSON.stringify(datasets.length ? { sql, datasetIds: datasets } : { sql });
  const parquetUrl = `${origin}/api/v1/query.parquet?sql=${encodeURIComponent(sql)}${datasets.length ? `&datasets=${datasets.join(',')}` : ''}&token=<YOUR_KEY>`;
  const mcp = JSON.stringify({ mcpServers: { 'unified-data-api': { type: 'http', url: `${origin}/mcp`, headers: { Authorization: 'Bearer <YOUR_KEY>' } } } }, null, 2);
  return [
    h('h3', {}, 'curl'),
    h('pre', {}, h('code', {}, `curl -H 'Authorization: Bearer <YOUR_KEY>' -H 'content-type: application/json' \\\n  -d ${shellQuote(body)} ${origin}/api/v1/query`)),
    h('h3', {}, 'DuckDB'),
    h('pre', {}, h('code', {}, `INSTALL httpfs; LOAD httpfs;\nSELECT * FROM read_parquet('${parquetUrl.replaceAll("'", "''")}');`)),
    h('h3', {}, 'MCP client config (tool run_sql)'),
    h('pre', {}, h('code', {}, mcp)),
  ];
}

/** The rows, with whether they were truncated, the cost, whether the result was cached and the balance. */
function queryResult(answer: QueryAnswer, headers: Headers): HTMLElement[] {
  const cost = headers.get('x-credit-cost') ?? '0';
  const cached = headers.get('x-service-cached') === 'true';
  const remaining = headers.get('x-credits-remaining');
  const { rows, row_count, truncated } = answer;
  const columns = answer.columns?.map((c) => c.name) ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return [
    h(
      'dl',
      { class: 'cards', 'aria-label': 'Query result' },
      h('div', {}, h('dt', {}, 'Rows'), h('dd', {}, String(row_count))),
      h('div', {}, h('dt', {}, 'Truncated'), h('dd', {}, truncated ? 'yes' : 'no')),
      h('div', {}, h('dt', {}, 'Cost'), h('dd', { 'data-testid': 'cost' }, `$${cost}`)),
      h('div', {}, h('dt', {}, 'Cached'), h('dd', {}, cached ? 'yes (no charge)' : 'no')),
      remaining ? h('div', {}, h('dt', {}, 'Balance'), h('dd', {}, `$${remaining}`)) : null,
    ),
    table(columns, rows.map((r) => columns.map((c) => formatCell(r[c])))),
  ];
}

/** The public tables and the user's sheets; choosing one puts a query over it in the editor. */
function tableBrowser(catalog: Tables, editor: HTMLTextAreaElement): HTMLElement {
  const use = (name: string) => () => {
    editor.value = `SELECT * FROM ${quoteName(name)} LIMIT 10`;
    editor.focus();
  };
  return h(
    'nav',
    { class: 'tables', 'aria-label': 'Tables' },
    h('h2', {}, 'Tables'),
    h('ul', {}, ...catalog.tables.map((t) => h('li', {}, h('button', { type: 'button', class: 'link', onclick: use(t.name), 'aria-label': `Use table ${t.name}` }, t.name), h('p', { class: 'muted' }, t.description)))),
    h('h2', {}, 'Your sheets'),
    catalog.sheets.length
      ? h('ul', {}, ...catalog.sheets.map((s) => h('li', {}, h('button', { type: 'button', class: 'link', onclick: use(s.table), 'aria-label': `Use sheet ${s.table}` }, s.table), h('p', { class: 'muted' }, s.columns.map((c) => `${c.name} ${c.type}`).join(', ')))))
      : h('p', { class: 'muted' }, 'Ready sheets appear here.'),
  );
}

/** Sheet slugs may hold hyphens: quote any name that is not a plain identifier. */
export function quoteName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/i.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}
