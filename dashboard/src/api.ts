/**
 * Calls to the dashboard's session routes (/dashboard/api). The session cookie travels by itself
 * (same origin); state-changing calls carry the CSRF token the session route hands out.
 */
const BASE = '/dashboard/api';
let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export interface Answer<T> {
  ok: boolean;
  status: number;
  body: T & { message?: string; code?: string };
  headers: Headers;
}

export async function call<T = Record<string, unknown>>(path: string, init: { method?: string; json?: unknown; form?: FormData } = {}): Promise<Answer<T>> {
  const method = init.method ?? (init.json !== undefined || init.form ? 'POST' : 'GET');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: init.form ?? (init.json !== undefined ? JSON.stringify(init.json) : undefined),
  });
  const body = (await res.json().catch(() => ({ message: `HTTP ${res.status}` }))) as Answer<T>['body'];
  return { ok: res.ok, status: res.status, body, headers: res.headers };
}

export function messageOf(answer: Answer<unknown>): string {
  return answer.body.message ?? `Something went wrong (HTTP ${answer.status}).`;
}
