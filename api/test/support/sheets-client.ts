/** Calls of the connected-sheet routes as a client makes them: multipart via FormData + Blob, JSON bodies. */
import type { TestApi } from '@uda/test-support/api-harness';

export interface FileSpec {
  readonly content: string | Uint8Array;
  readonly fileName: string;
  readonly type?: string;
}

export function form(file: FileSpec, fields: Record<string, string> = {}): FormData {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  body.set('file', new Blob([file.content], { type: file.type ?? 'application/octet-stream' }), file.fileName);
  return body;
}

export async function upload(api: TestApi, key: string, file: FileSpec, fields: Record<string, string> = {}): Promise<Response> {
  return api.get('/api/v1/datasets', { method: 'POST', body: form(file, fields), key });
}

export async function json(res: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * Polls the record until ingestion left `processing` (the worker runs in this process). The wait
 * doubles from 50 ms to 1 s: every poll counts on the per-IP burst limit (100 per 15 minutes), and a
 * slow ingestion on a loaded machine must not spend the test's budget before its own requests.
 */
export async function settled(api: TestApi, key: string, id: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (let waitMs = 50; Date.now() < deadline; waitMs = Math.min(waitMs * 2, 1_000)) {
    const { body } = await json(await api.get(`/api/v1/datasets/${id}`, { key }));
    if (body.status !== 'processing') return body;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  throw new Error(`sheet ${id} is still processing`);
}

/** Uploads and waits: the settled record. */
export async function ingest(api: TestApi, key: string, file: FileSpec, fields: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const created = await json(await upload(api, key, file, fields));
  if (created.status !== 202) throw new Error(`upload answered ${created.status}: ${JSON.stringify(created.body)}`);
  return settled(api, key, String(created.body.id));
}

export async function search(api: TestApi, key: string, id: string, q: string) {
  return json(await api.get(`/api/v1/datasets/${id}/search?q=${encodeURIComponent(q)}`, { key }));
}

export async function query(api: TestApi, key: string, id: string, sql: string) {
  return json(await api.get(`/api/v1/datasets/${id}/query`, { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sql }) }));
}
