/**
 * Tables of the live sources, built from snapshot files of real upstream answers under `live/`
 * (the same documents the API keeps for the stale fallback). A file's name says what it holds:
 * `wiki-search*.json`, `wiki-summary*.json`, `arxiv*.xml`, `stackexchange*.json`, `pypi*.json`,
 * `openalex*.json`. Then the answers kept in PostgreSQL for the stale fallback, when configured.
 * Later rows of the same key replace earlier ones.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  arxivRecords,
  openAlexRecords,
  pypiRecord,
  stackExchangeRecords,
  wikiSearchRecords,
  wikiSummaryRecord,
  UpstreamFormatError,
} from '@uda/shared/live-records';
import type { LiveCopyReader } from './live-copies.ts';
import { InputError, type Row, type TableSpec } from './table-spec.ts';

type Parse = (text: string) => Row[];

interface LiveTable {
  readonly spec: Omit<TableSpec, 'rows'>;
  readonly files: readonly { readonly pattern: RegExp; readonly parse: Parse }[];
  readonly key: (row: Row) => string;
}

const json = (text: string): unknown => JSON.parse(text);
const rows = (records: readonly object[]): Row[] => records.map((r) => Object.fromEntries(Object.entries(r)));

const LIVE_TABLES: readonly LiveTable[] = [
  {
    spec: {
      name: 'wiki',
      columns: { pageid: 'BIGINT', title: 'VARCHAR', url: 'VARCHAR', description: 'VARCHAR', extract: 'VARCHAR', updated_at: 'TIMESTAMPTZ' },
      primaryKey: ['pageid'],
      indexes: [['title']],
    },
    files: [
      { pattern: /^wiki-search.*\.json$/, parse: (t) => rows(wikiSearchRecords(json(t))) },
      // Summaries come last so that their fuller text replaces a search snippet of the same page.
      { pattern: /^wiki-summary.*\.json$/, parse: (t) => rows([wikiSummaryRecord(json(t))]) },
    ],
    key: (r) => String(r.pageid),
  },
  {
    spec: {
      name: 'arxiv',
      columns: {
        arxiv_id: 'VARCHAR', version: 'VARCHAR', title: 'VARCHAR', summary: 'VARCHAR', authors: 'VARCHAR[]',
        primary_category: 'VARCHAR', categories: 'VARCHAR[]', published: 'TIMESTAMPTZ', updated: 'TIMESTAMPTZ',
        url: 'VARCHAR', pdf_url: 'VARCHAR',
      },
      primaryKey: ['arxiv_id'],
    },
    files: [{ pattern: /^arxiv.*\.xml$/, parse: (t) => rows(arxivRecords(t)) }],
    key: (r) => String(r.arxiv_id),
  },
  {
    spec: {
      name: 'stackexchange',
      columns: {
        question_id: 'BIGINT', site: 'VARCHAR', title: 'VARCHAR', tags: 'VARCHAR[]', score: 'INTEGER',
        answer_count: 'INTEGER', view_count: 'BIGINT', is_answered: 'BOOLEAN', link: 'VARCHAR',
        created_at: 'TIMESTAMPTZ', last_activity_at: 'TIMESTAMPTZ',
      },
      primaryKey: ['site', 'question_id'],
    },
    files: [{ pattern: /^stackexchange.*\.json$/, parse: (t) => rows(stackExchangeRecords(json(t), 'stackoverflow')) }],
    key: (r) => `${String(r.site)}/${String(r.question_id)}`,
  },
  {
    spec: {
      name: 'pypi',
      columns: {
        name: 'VARCHAR', version: 'VARCHAR', summary: 'VARCHAR', license: 'VARCHAR', author: 'VARCHAR',
        requires_python: 'VARCHAR', home_page: 'VARCHAR', package_url: 'VARCHAR',
      },
      primaryKey: ['name'],
    },
    files: [{ pattern: /^pypi.*\.json$/, parse: (t) => rows([pypiRecord(json(t))]) }],
    key: (r) => String(r.name).toLowerCase(),
  },
  {
    spec: {
      name: 'openalex',
      columns: {
        id: 'VARCHAR', doi: 'VARCHAR', title: 'VARCHAR', publication_year: 'INTEGER', publication_date: 'DATE',
        type: 'VARCHAR', cited_by_count: 'BIGINT', authors: 'VARCHAR[]', abstract: 'VARCHAR',
      },
      primaryKey: ['id'],
    },
    files: [{ pattern: /^openalex.*\.json$/, parse: (t) => rows(openAlexRecords(json(t))) }],
    key: (r) => String(r.id),
  },
];

export function liveTables(inputDir: string, copies?: LiveCopyReader): TableSpec[] {
  const dir = join(inputDir, 'live');
  return LIVE_TABLES.map((table) => ({
    ...table.spec,
    async *rows() {
      const names = (await readdir(dir).catch(() => [] as string[])).sort();
      const byKey = new Map<string, Row>();
      for (const { pattern, parse } of table.files) {
        for (const name of names.filter((n) => pattern.test(n))) {
          for (const row of parseSnapshot(parse, await readFile(join(dir, name), 'utf8'), `live/${name}`)) {
            byKey.set(table.key(row), row);
          }
        }
      }
      for await (const row of copies?.results(table.spec.name) ?? []) byKey.set(table.key(row), row);
      yield* byKey.values();
    },
  }));
}

function parseSnapshot(parse: Parse, text: string, file: string): Row[] {
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof UpstreamFormatError || error instanceof SyntaxError) {
      throw new InputError(file, undefined, error.message);
    }
    throw error;
  }
}
