/**
 * Papers with Code dumps: `papers-with-abstracts.json` and `links-between-papers-and-code.json`,
 * each a JSON array (optionally gzipped, as published).
 */
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError, type TableSpec } from './table-spec.ts';

const paperSchema = z.object({
  paper_url: z.string(),
  arxiv_id: z.string().nullable(),
  title: z.string(),
  abstract: z.string().nullable(),
  url_abs: z.string().nullable(),
  url_pdf: z.string().nullable(),
  proceeding: z.string().nullable(),
  authors: z.array(z.string()),
  tasks: z.array(z.string()),
  date: z.string().nullable(),
});

const linkSchema = z.object({
  paper_url: z.string(),
  paper_title: z.string(),
  paper_arxiv_id: z.string().nullable(),
  repo_url: z.string(),
  is_official: z.boolean(),
  mentioned_in_paper: z.boolean(),
  mentioned_in_github: z.boolean(),
  framework: z.string().nullable(),
});

async function readArray<T>(inputDir: string, name: string, schema: z.ZodType<T>): Promise<T[]> {
  const file = `pwc/${name}`;
  const candidates = [join(inputDir, file), join(inputDir, `${file}.gz`)];
  let text: string | undefined;
  for (const path of candidates) {
    const bytes = await readFile(path).catch(() => undefined);
    if (bytes) text = (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
    if (text !== undefined) break;
  }
  if (text === undefined) throw new InputError(file, undefined, 'file not found (plain or .gz)');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new InputError(file, undefined, `invalid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(doc)) throw new InputError(file, undefined, 'expected a JSON array');
  return doc.map((item, index) => {
    const parsed = schema.safeParse(item);
    if (!parsed.success) throw new InputError(file, undefined, `item ${index}: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  });
}

export function pwcTables(inputDir: string): TableSpec[] {
  return [
    {
      name: 'pwc_papers',
      columns: {
        paper_url: 'VARCHAR', arxiv_id: 'VARCHAR', title: 'VARCHAR', abstract: 'VARCHAR', url_abs: 'VARCHAR',
        url_pdf: 'VARCHAR', proceeding: 'VARCHAR', authors: 'VARCHAR[]', tasks: 'VARCHAR[]', date: 'DATE',
      },
      primaryKey: ['paper_url'],
      indexes: [['arxiv_id']],
      async *rows() {
        yield* await readArray(inputDir, 'papers-with-abstracts.json', paperSchema);
      },
    },
    {
      name: 'pwc_links',
      columns: {
        paper_url: 'VARCHAR', paper_title: 'VARCHAR', paper_arxiv_id: 'VARCHAR', repo_url: 'VARCHAR',
        is_official: 'BOOLEAN', mentioned_in_paper: 'BOOLEAN', mentioned_in_github: 'BOOLEAN', framework: 'VARCHAR',
      },
      primaryKey: ['paper_url', 'repo_url'],
      async *rows() {
        yield* await readArray(inputDir, 'links-between-papers-and-code.json', linkSchema);
      },
    },
  ];
}
