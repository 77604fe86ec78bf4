/**
 * Every call counts (DECISIONS §4): each message of a JSON-RPC batch in one POST /mcp
 * counts against every limit as one request, a batch holds at most MAX_BATCH_CALLS messages, and a
 * call past a limit gets that limit's error as its own answer while the calls before it run.
 * Batches go through the official SDK's Streamable HTTP client transport, which sends arrays;
 * raw JSON-RPC over HTTP where the HTTP status and body are the point.
 */
import { describe, expect, it } from '@jest/globals';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { TestApi } from '@uda/test-support/api-harness';
import { useStoredStack } from '../../test/support/stacks.ts';
import { MAX_BATCH_CALLS } from './batch.ts';
import { ledgerOf } from '@uda/test-support/sql-stack';

const stack = useStoredStack();

const start = (limits: object = {}) => stack.ctx.start({ limits, config: { QUERY_RUNNER_URLS: stack.runner.url, DATA_DIR: stack.runner.dataDir } });

const toolCall = (id: number, name: string, args: Record<string, unknown> = {}): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

interface Answer {
  id: number;
  result?: { content: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string };
}

/** Sends one batch with the SDK's client transport; the answers by id. */
async function sendBatch(api: TestApi, messages: JSONRPCMessage[], key?: string): Promise<Answer[]> {
  const url = new URL(`${api.url}/mcp${key ? `?token=${key}` : ''}`);
  const transport = new StreamableHTTPClientTransport(url);
  const received: Answer[] = [];
  transport.onmessage = (message) => received.push(message as unknown as Answer);
  await transport.start();
  await transport.send(messages);
  await transport.close();
  return received.sort((a, b) => a.id - b.id);
}

function rawBatch(api: TestApi, messages: JSONRPCMessage[], key?: string): Promise<Response> {
  return fetch(`${api.url}/mcp${key ? `?token=${key}` : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(messages),
  });
}

const ids = (answers: Answer[], pick: (a: Answer) => boolean) => answers.filter(pick).map((a) => a.id);

describe('POST /mcp batches: every call counts', () => {
  it(`a batch of ${MAX_BATCH_CALLS} messages is answered in full; one of 100 run_sql calls is a JSON-RPC error (400) and runs none`, async () => {
    const api = await start();
    const { accountId, apiKey } = await api.account();
    const full = await sendBatch(api, Array.from({ length: MAX_BATCH_CALLS }, (_, i) => toolCall(i + 1, 'list_sources')), apiKey);
    expect(full.map((a) => a.id)).toEqual(Array.from({ length: MAX_BATCH_CALLS }, (_, i) => i + 1));
    expect(full.every((a) => a.result && !a.result.isError)).toBe(true);

    const calls = Array.from({ length: 100 }, (_, i) => toolCall(i + 1, 'run_sql', { sql: `SELECT text_id FROM gutenberg ORDER BY text_id LIMIT ${i + 1}` }));
    const res = await rawBatch(api, calls, apiKey);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining(`at most ${MAX_BATCH_CALLS} messages`) } });
    expect(await stack.ctx.db('ledger').where({ account_id: accountId })).toHaveLength(0);
    await api.close();
  });

  it('burst: each message is one request; messages past the limit get its error, the ones before it run', async () => {
    const api = await start({ burst: { points: 4, windowS: 900 } });
    const batch: JSONRPCMessage[] = [1, 2, 3, 4].map((id) => toolCall(id, 'list_sources'));
    batch.push({ jsonrpc: '2.0', id: 5, method: 'tools/list' }, toolCall(6, 'list_sources'));
    const res = await rawBatch(api, batch);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const answers = ((await res.json()) as Answer[]).sort((a, b) => a.id - b.id);
    expect(ids(answers, (a) => a.result?.isError === undefined && a.result !== undefined)).toEqual([1, 2, 3, 4]);
    expect(answers[4]).toMatchObject({ id: 5, error: { code: -32000, message: expect.stringContaining('Too many requests') } });
    expect(answers[5]).toMatchObject({ id: 6, result: { isError: true, content: [{ text: expect.stringContaining('Too many requests') }] } });
    // The window is spent: the next request is refused whole.
    expect((await api.get('/api/v1/auth/usage')).status).toBe(429);
    await api.close();
  });

  it('anonymous allowance: each search_service call is one use; the call past it gets the limit as its result', async () => {
    const api = await start({ anonymous: { points: 2, windowS: 86_400 } });
    const batch = [1, 2, 3].map((id) => toolCall(id, 'search_service', { source: 'gutenberg', query: 'war', limit: 1 }));
    const answers = await sendBatch(api, batch);
    expect(ids(answers, (a) => a.result?.isError === undefined)).toEqual([1, 2]);
    expect(answers[2]).toMatchObject({ id: 3, result: { isError: true, content: [{ text: expect.stringContaining('Anonymous request limit reached') }] } });
    // Both uses were successes, so they stay taken: the next anonymous lookup meets the limit.
    expect((await api.get('/gutenberg/war')).status).toBe(429);
    await api.close();
  });

  it('daily cap: each run_sql call that runs a query is one count; the call past the cap gets its error', async () => {
    const api = await start({ exportDaily: 2 });
    const { accountId, apiKey } = await api.account();
    const batch = [1, 2, 3].map((id) => toolCall(id, 'run_sql', { sql: `SELECT text_id FROM gutenberg ORDER BY text_id LIMIT ${id}` }));
    const answers = await sendBatch(api, batch, apiKey);
    expect(answers).toHaveLength(3);
    expect(answers.filter((a) => !a.result?.isError)).toHaveLength(2);
    const refused = answers.filter((a) => a.result?.isError);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.result!.content[0]!.text).toContain('Export rate limit exceeded');
    // SQL charges reach the ledger with the wallet's next flush; `ledgerOf` waits for it.
    const charges = (await ledgerOf(stack.ctx, accountId)).filter((row) => row.kind === 'charge');
    expect(charges).toHaveLength(2);
    await api.close();
  });
});
