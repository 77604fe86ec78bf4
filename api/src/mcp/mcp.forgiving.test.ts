/**
 * The MCP tool `search_service` forgives as the REST lookup does: the official SDK client
 * over Streamable HTTP, a real query-runner child process and a database the real exporter built
 * from the sample data. A plural, a typo and a split name find their rows; a company is one row.
 */
import { describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useStoredStack } from '../../test/support/stacks.ts';

const stack = useStoredStack();

interface ToolResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

describe('MCP search_service over the stored sources', () => {
  it('finds what people mean: plurals, typos, split words; one row per company', async () => {
    const api = await stack.ctx.start({ config: { QUERY_RUNNER_URLS: stack.runner.url } });
    const client = new Client({ name: 'uda-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`)));
    const search = async (source: string, query: string) => {
      const result = (await client.callTool({ name: 'search_service', arguments: { source, query, limit: 10 } })) as ToolResult;
      expect({ source, query, isError: result.isError }).toEqual({ source, query, isError: undefined });
      return (JSON.parse(result.content[0]!.text) as { results: Record<string, unknown>[] }).results;
    };
    expect((await search('food', 'strawberry')).slice(0, 3).some((row) => /^Strawberries, /.test(row.description as string))).toBe(true);
    expect((await search('gutenberg', 'frankenstien'))[0]).toMatchObject({ text_id: 84 });
    expect((await search('sec', 'jp morgan'))[0]).toMatchObject({ ticker: 'JPM' });
    const ciks = (await search('sec', 'goldman sachs')).map((row) => row.cik);
    expect(ciks).toEqual([...new Set(ciks)]);
    await client.close();
    await api.close();
  });
});
