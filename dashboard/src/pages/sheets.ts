/**
 * Connected sheets (DECISIONS §8): upload by drag and drop or file picker (CSV, TSV, JSON, NDJSON,
 * Parquet, up to 50 MB), the list with status, rows, columns and errors, replace, delete, and a
 * search preview of GET /api/v1/datasets/{id}/search through the session route.
 */
import type { SheetCreatedAnswer, SheetListAnswer, SheetQuota, SheetRecord as Sheet, SheetSearchAnswer } from '@uda/api/sheets/schema';
import { call, messageOf } from '../api.ts';
import { confirmDialog } from '../dialog.ts';
import { h, replace, status, table, when } from '../dom.ts';

export function quotaText(q: SheetQuota): string {
  const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;
  return `Your plan holds ${q.max_sheets} sheets and ${mb(q.max_bytes)} of files: you use ${q.sheets} ${q.sheets === 1 ? 'sheet' : 'sheets'} and ${mb(q.bytes)}.`;
}

const ACCEPT = '.csv,.tsv,.json,.ndjson,.jsonl,.parquet,text/csv,text/tab-separated-values,application/json,application/x-ndjson,application/vnd.apache.parquet';
const MAX_BYTES = 50 * 1024 * 1024;

type Feedback = ReturnType<typeof status>;

/** What the page's parts share: where messages show, and how to send a file and show the list again. */
interface SheetsView {
  readonly feedback: Feedback;
  send(path: string, method: 'POST' | 'PUT', file: File, name?: string): Promise<void>;
  refresh(): Promise<void>;
}

export async function sheetsPage(): Promise<HTMLElement> {
  const listArea = h('div');
  const quotaArea = h('p', { class: 'muted', 'data-testid': 'sheet-quota' });
  const sheetSelect = h('select', { id: 'search-sheet' });
  let timer: number | undefined;
  const view: SheetsView = {
    feedback: status(),
    send: (path, method, file, name) => sendSheet(view, path, method, file, name),
    refresh: async () => {
      const answer = await call<SheetListAnswer>('/datasets');
      if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
      const sheets = answer.body.datasets;
      replace(quotaArea, quotaText(answer.body.quota));
      replace(listArea, sheetList(view, sheets));
      const selected = sheetSelect.value;
      replace(sheetSelect, ...sheets.filter((s) => s.status === 'ready').map((s) => h('option', { value: s.id, selected: s.id === selected }, s.name)));
      window.clearTimeout(timer);
      if (sheets.some((s) => s.status === 'processing')) timer = window.setTimeout(() => void (listArea.isConnected && view.refresh()), 1000);
    },
  };
  await view.refresh();
  return h(
    'section',
    { 'aria-labelledby': 'sheets-title' },
    h('h1', { id: 'sheets-title' }, 'Connected sheets'),
    h('p', {}, 'Your own tables: query them in the SQL console by their table name, or through the API with your key.'),
    quotaArea,
    uploadArea(view),
    view.feedback,
    listArea,
    h('h2', {}, 'Search a sheet'),
    ...searchForm(view.feedback, sheetSelect),
  );
}

async function sendSheet(view: SheetsView, path: string, method: 'POST' | 'PUT', file: File, name?: string): Promise<void> {
  const { feedback } = view;
  if (file.size > MAX_BYTES) return feedback.say('That file is over the 50 MB limit.', 'error');
  const form = new FormData();
  if (name) form.append('name', name);
  form.append('file', file, file.name);
  feedback.say(`Uploading ${file.name}…`);
  const answer = await call<SheetCreatedAnswer>(path, { method, form });
  if (!answer.ok) return feedback.say(messageOf(answer), 'error');
  feedback.say(`Uploaded ${file.name}; processing.`);
  await view.refresh();
}

function sheetList(view: SheetsView, sheets: readonly Sheet[]): HTMLElement {
  if (sheets.length === 0) return h('p', { class: 'muted' }, 'No sheets yet.');
  return table(
    ['Name', 'Slug', 'Status', 'Rows', 'Columns', 'Updated', 'Actions'],
    sheets.map((s) => [
      s.name,
      h('code', {}, s.slug),
      h('span', { class: `badge ${s.status}` }, s.status),
      s.row_count ?? '—',
      s.status === 'failed' ? h('span', { class: 'error' }, s.error ?? 'failed') : s.columns.map((c) => `${c.name} (${c.type})`).join(', '),
      when(s.updated_at),
      sheetActions(view, s),
    ]),
    'Your sheets',
  );
}

/** Replace file and Delete, for one sheet. */
function sheetActions(view: SheetsView, s: Sheet): HTMLElement {
  const picker = h('input', { type: 'file', accept: ACCEPT, class: 'visually-hidden', tabindex: '-1', 'aria-hidden': 'true' });
  picker.addEventListener('change', () => picker.files?.[0] && void view.send(`/datasets/${encodeURIComponent(s.id)}/file`, 'PUT', picker.files[0]));
  const remove = async () => {
    const ok = await confirmDialog({ title: 'Delete the sheet?', body: `"${s.name}" and its data are removed. Queries that name it will fail.`, confirm: 'Delete sheet' });
    if (ok === undefined) return;
    const answer = await call(`/datasets/${encodeURIComponent(s.id)}`, { method: 'DELETE' });
    if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
    view.feedback.say('Sheet deleted.');
    await view.refresh();
  };
  return h(
    'div',
    { class: 'actions' },
    picker,
    h('button', { type: 'button', 'aria-label': `Replace file of ${s.name}`, onclick: () => picker.click() }, 'Replace file'),
    h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${s.name}`, onclick: remove }, 'Delete'),
  );
}

/** The upload: a file picker, or a file dropped on the area. */
function uploadArea(view: SheetsView): HTMLElement {
  const nameInput = h('input', { id: 'sheet-name', maxlength: 200, placeholder: 'optional' });
  const fileInput = h('input', { id: 'sheet-file', type: 'file', accept: ACCEPT });
  fileInput.addEventListener('change', () => fileInput.files?.[0] && void view.send('/datasets', 'POST', fileInput.files[0], nameInput.value || undefined).then(() => (fileInput.value = '')));
  const drop = h('div', { class: 'drop', role: 'group', 'aria-label': 'Upload a sheet' }, h('p', {}, 'Drop a CSV, TSV, JSON, NDJSON or Parquet file here (up to 50 MB), or choose one:'), h('label', { for: 'sheet-name' }, 'Sheet name'), nameInput, h('label', { for: 'sheet-file' }, 'File'), fileInput);
  drop.addEventListener('dragover', (event) => (event.preventDefault(), drop.classList.add('over')));
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const file = event.dataTransfer?.files[0];
    if (file) void view.send('/datasets', 'POST', file, nameInput.value || undefined);
  });
  return drop;
}

/** The search preview of a ready sheet: the form, and where its rows show. */
function searchForm(feedback: Feedback, sheetSelect: HTMLSelectElement): HTMLElement[] {
  const resultArea = h('div');
  const searchText = h('input', { id: 'search-text', type: 'search', maxlength: 500, required: true });
  const search = async (event: Event) => {
    event.preventDefault();
    if (!sheetSelect.value) return feedback.say('Upload a sheet and wait until it is ready first.', 'error');
    const answer = await call<SheetSearchAnswer>(`/datasets/${encodeURIComponent(sheetSelect.value)}/search?q=${encodeURIComponent(searchText.value)}`);
    if (!answer.ok) return feedback.say(messageOf(answer), 'error');
    const rows = answer.body.rows;
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    replace(
      resultArea,
      h('p', {}, `${answer.body.row_count} matching rows`),
      rows.length ? table(columns, rows.map((r) => columns.map((c) => formatCell(r[c])))) : null,
    );
  };
  const form = h('form', { class: 'inline', onsubmit: search }, h('label', { for: 'search-sheet' }, 'Sheet'), sheetSelect, h('label', { for: 'search-text' }, 'Search text'), searchText, h('button', { type: 'submit' }, 'Search'));
  return [form, resultArea];
}

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
