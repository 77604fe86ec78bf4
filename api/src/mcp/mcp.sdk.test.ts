/**
 * POST /mcp with the official SDK client over Streamable HTTP (DECISIONS §9): the tools, the same
 * lookup and billing as REST, tool failures as `isError` results with HTTP 200, no auth errors, and
 * the anonymous allowance with the REST 429 body. Live lookups go to loopback stack.fakes.
 */
import { describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sourceNames } from '@uda/shared/catalog';
import type { TestApi } from '@uda/test-support/api-harness';
import { useLiveStack } from '../../test/support/stacks.ts';

const stack = useLiveStack();

interface ToolResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

async function connect(api: TestApi, key?: string): Promise<Client> {
  const client = new Client({ name: 'uda-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

const text = (result: ToolResult) => result.content[0]!.text;

/** One raw JSON-RPC tools/call, to see the HTTP status, headers and body the SDK hides. */
function rawCall(api: TestApi, args: Record<string, unknown>): Promise<Response> {
  return fetch(`${api.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_service', arguments: args } }),
  });
}

describe('POST /mcp with the SDK client', () => {
  it('lists search_service, list_sources and run_sql with their input schemas', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const client = await connect(api);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['list_sources', 'run_sql', 'search_service']);
    const search = tools.find((t) => t.name === 'search_service')!;
    expect(search.inputSchema.required).toEqual(['source', 'query']);
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(['source', 'query', 'limit']);
    expect(search.description).toContain('wikipedia');
    await client.close();
    await api.close();
  });

  it('search_service: the lookup data, billed per row like the REST route', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const { apiKey, accountId } = await api.account();
    const client = await connect(api, apiKey);
    const result = await call(client, 'search_service', { source: 'Wikipedia', query: 'counter strike', limit: 3 });
    expect(result.isError).toBeUndefined();
    const data = JSON.parse(text(result)) as { source: string; results: { title: string }[] };
    expect(data.source).toBe('wiki');
    expect(data.results).toHaveLength(3);
    expect(data.results[0]!.title).toBe('Counter-Strike');
    expect(await api.services.billing.balance(accountId)).toBe(5_000_000 - 3 * 25_000);
    await client.close();
    await api.close();
  });

  it('search_service failures are isError results: no results, unsupported source, upstream failure, insufficient credit', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const { apiKey, accountId } = await api.account({ usd: '0.01' });
    const client = await connect(api, apiKey);
    stack.fakes.arxiv.mode = 'empty';
    const none = await call(client, 'search_service', { source: 'arxiv', query: 'Nothing Here' });
    stack.fakes.arxiv.mode = 'ok';
    expect(none).toEqual({ content: [{ type: 'text', text: 'No results found for "Nothing Here" in arxiv' }], isError: true });
    const unsupported = await call(client, 'search_service', { source: 'nope', query: 'x' });
    expect(unsupported.isError).toBe(true);
    for (const name of sourceNames()) expect(text(unsupported)).toContain(name);
    stack.fakes.wiki.mode = 'unavailable';
    const failed = await call(client, 'search_service', { source: 'wiki', query: 'mcp upstream down' });
    stack.fakes.wiki.mode = 'ok';
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^Search failed for wiki: .*No credit was used\.$/);
    const poor = await call(client, 'search_service', { source: 'wiki', query: 'counter strike', limit: 10 });
    expect(poor.isError).toBe(true);
    expect(text(poor)).toMatch(/^Insufficient credit/);
    expect(await api.services.billing.balance(accountId)).toBe(10_000);
    await client.close();
    await api.close();
  });

  it('list_sources is free and lists every source; run_sql needs a key and reports validator messages', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const anonymous = await connect(api);
    const listed = JSON.parse(text(await call(anonymous, 'list_sources', {}))) as { sources: { id: string; aliases: string[] }[] };
    expect(listed.sources.map((s) => s.id)).toEqual(['wiki', 'arxiv', 'stackexchange', 'pypi', 'openalex', 'gutenberg', 'census', 'food', 'pwc', 'sec']);
    const keyless = await call(anonymous, 'run_sql', { sql: 'SELECT 1' });
    expect(keyless).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('needs an API key') }] });
    await anonymous.close();
    const { apiKey } = await api.account();
    const client = await connect(api, apiKey);
    expect(await call(client, 'run_sql', { sql: 'DROP TABLE gutenberg' })).toEqual({
      content: [{ type: 'text', text: 'Query failed: Disallowed operation: DROP' }],
      isError: true,
    });
    await client.close();
    await api.close();
  });

  it('never answers an auth error: an invalid key runs on the anonymous allowance, which counts only successful calls', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config, limits: { anonymous: { points: 2, windowS: 86_400 } } });
    const client = await connect(api, 'service_invalid_key_000000000000000000000000000000');
    expect((await call(client, 'search_service', { source: 'nope', query: 'x' })).isError).toBe(true);
    expect((await call(client, 'list_sources', {})).isError).toBeUndefined();
    for (let i = 0; i < 2; i++) expect((await call(client, 'search_service', { source: 'wiki', query: 'counter strike' })).isError).toBeUndefined();
    await client.close();
    const refused = await rawCall(api, { source: 'wiki', query: 'counter strike' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await refused.json()).toEqual({
      status: 'error',
      error: 'REQUEST_LIMIT_EXCEEDED',
      account_state: 'anonymous',
      message: expect.any(String),
      limit: 2,
      remaining: 0,
      hint: expect.stringContaining('Authorization'),
    });
    // The REST lookups share the same allowance.
    expect((await api.get('/wiki/counter%20strike')).status).toBe(429);
    await api.close();
  });

  it('answers a raw anonymous tools/call with HTTP 200 and X-RateLimit-* headers', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const res = await rawCall(api, { source: 'so', query: 'python list', limit: 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('50');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
    const body = (await res.json()) as { result: ToolResult };
    expect(JSON.parse(body.result.content[0]!.text)).toMatchObject({ source: 'stackexchange' });
    await api.close();
  });
});
