/**
 * The MCP `run_sql` tool on a real query-runner and export: billed like POST /api/v1/query (per row,
 * once per 5-minute window), with the result as `{row_count, rows, columns, truncated, sql_executed}`.
 */
import { describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useStoredStack } from '../../test/support/stacks.ts';

const stack = useStoredStack();

describe('MCP run_sql', () => {
  it('returns the rows and charges them once per window, like POST /api/v1/query', async () => {
    const api = await stack.ctx.start({ config: { QUERY_RUNNER_URLS: stack.runner.url, DATA_DIR: stack.runner.dataDir } });
    const { apiKey, accountId } = await api.account();
    const client = new Client({ name: 'uda-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp?token=${apiKey}`)));
    const sql = 'SELECT text_id, title FROM gutenberg ORDER BY text_id LIMIT 3';
    const first = (await client.callTool({ name: 'run_sql', arguments: { sql } })) as { content: { text: string }[]; isError?: boolean };
    expect(first.isError).toBeUndefined();
    const body = JSON.parse(first.content[0]!.text) as { row_count: number; rows: { text_id: number }[]; columns: unknown[]; truncated: boolean; sql_executed: string };
    expect(body).toMatchObject({ row_count: 3, truncated: false });
    expect(body.rows.map((r) => r.text_id)).toEqual([1, 2, 3]);
    expect(await api.services.billing.balance(accountId)).toBe(5_000_000 - 3 * 5_000);
    // The same query in the window is a free re-read.
    await client.callTool({ name: 'run_sql', arguments: { sql } });
    expect(await api.services.billing.balance(accountId)).toBe(5_000_000 - 3 * 5_000);
    await client.close();
    await api.close();
  });

  it('reports an engine error once as "Query failed: …", without a doubled prefix, and charges nothing', async () => {
    const api = await stack.ctx.start({ config: { QUERY_RUNNER_URLS: stack.runner.url, DATA_DIR: stack.runner.dataDir } });
    const { apiKey, accountId } = await api.account();
    const client = new Client({ name: 'uda-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp?token=${apiKey}`)));
    const failed = (await client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT no_such_column FROM gutenberg' } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    expect(failed.isError).toBe(true);
    expect(failed.content[0]!.text).toMatch(/^Query failed: .*no_such_column/);
    expect(failed.content[0]!.text).not.toMatch(/Query failed: Query failed/);
    expect(await api.services.billing.balance(accountId)).toBe(5_000_000);
    await client.close();
    await api.close();
  });

  it('refuses an account whose email is not verified yet, charging nothing, while search_service works (DECISIONS §5 "Email")', async () => {
    const api = await stack.ctx.start({ config: { QUERY_RUNNER_URLS: stack.runner.url, DATA_DIR: stack.runner.dataDir } });
    const account = await api.services.accounts.create({ email: `unverified-${Date.now()}@example.com`, tier: 'free', emailVerified: false });
    const apiKey = await api.services.keys.create(account.id, 'k');
    const client = new Client({ name: 'uda-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp?token=${apiKey}`)));
    const sql = 'SELECT text_id FROM gutenberg ORDER BY text_id LIMIT 1';
    const refused = (await client.callTool({ name: 'run_sql', arguments: { sql } })) as { content: { text: string }[]; isError?: boolean };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/^Verify your email first/);
    const search = (await client.callTool({ name: 'search_service', arguments: { source: 'gutenberg', query: 'the art of war', limit: 1 } })) as { isError?: boolean };
    expect(search.isError).toBeUndefined();
    await api.services.accounts.markEmailVerified(account.id);
    const ran = (await client.callTool({ name: 'run_sql', arguments: { sql } })) as { content: { text: string }[]; isError?: boolean };
    expect(ran.isError).toBeUndefined();
    expect(JSON.parse(ran.content[0]!.text)).toMatchObject({ row_count: 1 });
    await client.close();
    await api.close();
  });
});
