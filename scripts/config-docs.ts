/**
 * The configuration tables of `docs/configuration.md`, generated from the config schemas so that
 * they cannot drift: `npm run docs:config` rewrites them, and a test fails when the file differs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { z } from 'zod';
import { describeSchema } from '@uda/shared/config';

export interface ConfigSection {
  readonly id: string;
  readonly schema: z.ZodObject;
}

const ROOT = join(import.meta.dirname, '..');
export const CONFIG_DOC = join(ROOT, 'docs', 'configuration.md');

/** Loaded lazily: each workspace's config module is imported only when the docs are built. */
export async function configSections(): Promise<ConfigSection[]> {
  const [{ apiEnv, adminCliEnv, migrateEnv }, { runnerConfigSchema }, { exporterConfigSchema }, { sheetsWorkerConfigSchema }] = await Promise.all([
    import('@uda/api/config'),
    import('@uda/query-runner/config'),
    import('@uda/exporter/config'),
    import('@uda/exporter/sheets/config'),
  ]);
  return [
    { id: 'api', schema: apiEnv },
    { id: 'admin-cli', schema: adminCliEnv },
    { id: 'migrate', schema: migrateEnv },
    { id: 'query-runner', schema: runnerConfigSchema },
    { id: 'exporter', schema: exporterConfigSchema },
    { id: 'sheets-worker', schema: sheetsWorkerConfigSchema },
  ];
}

function showDefault(value: unknown): string {
  if (value === undefined) return '(unset)';
  // Paths inside the repository are shown relative to it, as a newcomer sees them.
  if (typeof value === 'string' && value.startsWith(ROOT)) return `\`${relative(ROOT, value)}\``;
  return `\`${String(value)}\``;
}

export function configTable(schema: z.ZodObject): string {
  const rows = describeSchema(schema).map(
    (field) => `| \`${field.name}\` | ${showDefault(field.default)} | ${field.help.replace(/\|/g, '\\|')} |`,
  );
  return ['| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

const marker = (id: string, end: 'start' | 'end') => `<!-- config:${id}:${end} -->`;

/** The document with every marked section replaced by its generated table. */
export function renderConfigDoc(readme: string, sections: readonly ConfigSection[]): string {
  let out = readme;
  for (const { id, schema } of sections) {
    const start = out.indexOf(marker(id, 'start'));
    const end = out.indexOf(marker(id, 'end'));
    if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the ${marker(id, 'start')} … ${marker(id, 'end')} section`);
    out = `${out.slice(0, start + marker(id, 'start').length)}\n${configTable(schema)}\n${out.slice(end)}`;
  }
  return out;
}

if (process.argv[1] === import.meta.filename) {
  const doc = await readFile(CONFIG_DOC, 'utf8');
  await writeFile(CONFIG_DOC, renderConfigDoc(doc, await configSections()));
  console.log('docs/configuration.md tables updated');
}
