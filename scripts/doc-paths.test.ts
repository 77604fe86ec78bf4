/**
 * Docs that cannot drift (STYLE §12): every repository path a tracked Markdown file names in
 * backticks exists, relative to the repository root or to the Markdown file's folder.
 *
 * A backticked text is taken for a repository path when it has a `/` and either its first segment
 * is a file or folder of the repository (or of the Markdown file's folder), or it ends in a source
 * file extension. Not paths, so skipped: URLs and URL paths (`/api/v1/query`), globs, placeholders
 * (`<id>`, `{name}`, `…`), package specifiers (`@uda/shared/logger`), home and absolute paths, and
 * anything with spaces or `=`/`:` (labels, commands). Explicit exceptions are few and listed below.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const repo = resolve(import.meta.dirname, '..');

/** Markdown files that cite other repositories' files (the style anchors, the sample data's sources). */
const CITES_OTHER_REPOSITORIES = new Set(['docs/STYLE.md', 'exporter/data/SOURCES.md']);

/** Runtime objects that share a name with a repository folder: object-store keys, build output, the local data folder. */
const RUNTIME_PREFIXES = ['exports/', 'results/', 'sheets/', 'raw/', '.data/', 'dashboard/dist'];

const SOURCE_EXTENSION = /\.(ts|tsx|js|mjs|cjs|json|md|ya?ml|sh|tpl|txt|html|css|toml|sql)$/;
const NOT_A_PATH = /\s|:\/\/|[*?<>{}…|=:()$[\]]|\.\.\./;

const tracked = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).split('\n').filter(Boolean);
const trackedSet = new Set(tracked);
const folders = new Set(tracked.flatMap((file) => file.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));

function existsInRepo(path: string): boolean {
  const clean = normalize(path).replace(/\/+$/, '');
  return trackedSet.has(clean) || folders.has(clean);
}

/** Inline code spans outside fenced blocks, with their line numbers. */
function codeSpans(markdown: string): { text: string; line: number }[] {
  const spans: { text: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const match of line.matchAll(/`([^`]+)`/g)) spans.push({ text: match[1]!.trim(), line: i + 1 });
  });
  return spans;
}

/** The span as a repository path, or undefined when it is not one (see the top). */
function repositoryPath(span: string, folder: string): string | undefined {
  const path = span.replace(/#.*$/, '');
  if (!path.includes('/') || NOT_A_PATH.test(path) || /^[/~@]/.test(path)) return undefined;
  if (RUNTIME_PREFIXES.some((prefix) => path.startsWith(prefix))) return undefined;
  const first = path.split('/')[0]!;
  const namesRepoEntry = existsInRepo(first) || existsInRepo(join(folder, first));
  return namesRepoEntry || SOURCE_EXTENSION.test(path) ? path : undefined;
}

function driftedPaths(): string[] {
  const problems: string[] = [];
  for (const file of tracked.filter((f) => f.endsWith('.md') && !CITES_OTHER_REPOSITORIES.has(f))) {
    const folder = dirname(file);
    for (const { text, line } of codeSpans(readFileSync(join(repo, file), 'utf8'))) {
      const path = repositoryPath(text, folder);
      if (path && !existsInRepo(path) && !existsInRepo(join(folder, path))) problems.push(`${file}:${line}: \`${text}\` does not exist`);
    }
  }
  return problems;
}

describe('Markdown paths', () => {
  it('name only files and folders that exist', () => {
    expect(driftedPaths()).toEqual([]);
  });

  it('are recognised as paths, and non-paths are not', () => {
    expect(repositoryPath('api/src/metrics.ts', '.')).toBe('api/src/metrics.ts');
    expect(repositoryPath('lookups/lookup-connections.ts', 'query-runner')).toBe('lookups/lookup-connections.ts');
    expect(repositoryPath('docs/runbooks.md#udaexporterstale', '.')).toBe('docs/runbooks.md');
    for (const text of ['/api/v1/query', 'https://pypi.org', 'exports/<version>/…', '.data/', '@uda/shared/logger', 'text/plain', 'test/k8s/*.test.ts', 'billing.ts']) {
      expect({ text, path: repositoryPath(text, '.') }).toEqual({ text, path: undefined });
    }
  });
});
