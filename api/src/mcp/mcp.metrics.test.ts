/**
 * `uda_mcp_tool_calls_total{tool,outcome}` moves by one per tool call made with the official SDK
 * client, `ok` or `error` as the result says; a stored-source search whose runner cannot be reached
 * also moves `uda_query_backend_unavailable_total`, as the same failure over REST does.
 */
import { describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApi } from '@uda/test-support/api-harness';
import { freePort } from '../../test/support/spawn.ts';
import { useLiveStack } from '../../test/support/stacks.ts';
import { reader } from '@uda/test-support/metrics';

const stack = useLiveStack();

async function connect(api: TestApi, key?: string): Promise<Client> {
  const client = new Client({ name: 'uda-metrics-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers } }));
  return client;
}

describe('uda_mcp_tool_calls_total', () => {
  it('counts each call by tool and outcome', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const value = reader(api.services.metrics.registry);
    const client = await connect(api);
    expect((await client.callTool({ name: 'list_sources', arguments: {} })).isError).toBeFalsy();
    expect((await client.callTool({ name: 'search_service', arguments: { source: 'pypi', query: 'requests' } })).isError).toBeFalsy();
    expect((await client.callTool({ name: 'search_service', arguments: { source: 'nosuchsource', query: 'x' } })).isError).toBe(true);
    // run_sql needs a key: an anonymous call is an error result.
    expect((await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT 1' } })).isError).toBe(true);
    expect(await value('uda_mcp_tool_calls_total', { tool: 'list_sources', outcome: 'ok' })).toBe(1);
    expect(await value('uda_mcp_tool_calls_total', { tool: 'search_service', outcome: 'ok' })).toBe(1);
    expect(await value('uda_mcp_tool_calls_total', { tool: 'search_service', outcome: 'error' })).toBe(1);
    expect(await value('uda_mcp_tool_calls_total', { tool: 'run_sql', outcome: 'error' })).toBe(1);
    expect(await value('uda_mcp_tool_calls_total')).toBe(4);
    // The search itself is counted once, by the lookup core both REST and MCP call.
    expect(await value('uda_lookups_total', { source: 'pypi', outcome: 'hit' })).toBe(1);
    await client.close();
    await api.close();
  });

  it('a stored-source search without a reachable runner also counts as the backend being unavailable', async () => {
    const api = await stack.ctx.start({ config: { ...stack.fakes.config, QUERY_RUNNER_URLS: `http://127.0.0.1:${await freePort()}` } });
    const value = reader(api.services.metrics.registry);
    const client = await connect(api);
    expect((await client.callTool({ name: 'search_service', arguments: { source: 'books', query: 'war' } })).isError).toBe(true);
    expect(await value('uda_mcp_tool_calls_total', { tool: 'search_service', outcome: 'error' })).toBe(1);
    expect(await value('uda_query_backend_unavailable_total')).toBe(1);
    await client.close();
    await api.close();
  });
});
