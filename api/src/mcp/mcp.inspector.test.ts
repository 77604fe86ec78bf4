/**
 * POST /mcp with an independent client: the MCP inspector CLI (`@modelcontextprotocol/inspector@0.21`,
 * fetched by npx from the npm registry on first use, then from npx's cache) lists the tools and
 * calls two of them over Streamable HTTP.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { useLiveStack } from '../../test/support/stacks.ts';

const stack = useLiveStack();

/** Runs the inspector CLI and parses the one JSON document it prints. */
function inspector(url: string, args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['-y', '@modelcontextprotocol/inspector@0.21', '--cli', url, '--transport', 'http', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`inspector exited ${code}: ${err}${out}`));
      try {
        resolve(JSON.parse(out.slice(out.indexOf('{'))));
      } catch {
        reject(new Error(`inspector printed no JSON: ${out}${err}`));
      }
    });
  });
}

describe('POST /mcp with the MCP inspector CLI', () => {
  it('lists the tools, and calls list_sources and search_service', async () => {
    const api = await stack.ctx.start({ config: stack.fakes.config });
    const { apiKey } = await api.account();
    const url = `${api.url}/mcp?token=${apiKey}`;
    const listed = (await inspector(url, ['--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name).sort()).toEqual(['list_sources', 'run_sql', 'search_service']);
    const sources = (await inspector(url, ['--method', 'tools/call', '--tool-name', 'list_sources'])) as { content: { text: string }[] };
    expect(JSON.parse(sources.content[0]!.text).sources).toHaveLength(10);
    const search = (await inspector(url, ['--method', 'tools/call', '--tool-name', 'search_service', '--tool-arg', 'source=pypi', '--tool-arg', 'query=six'])) as {
      content: { text: string }[];
      isError?: boolean;
    };
    expect(search.isError).toBeFalsy();
    const data = JSON.parse(search.content[0]!.text) as { source: string; results: { name: string }[] };
    expect(data.source).toBe('pypi');
    expect(data.results[0]!.name).toBe('six');
    await api.close();
  }, 120_000);
});
