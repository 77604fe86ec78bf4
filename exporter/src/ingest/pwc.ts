/**
 * Papers with Code dumps: `papers-with-abstracts.json` and `links-between-papers-and-code.json`,
 * each a JSON array (optionally gzipped, as published), read by DuckDB's `read_json`.
 */
import { jsonArraySource, type JsonArraySql } from './json-sql.ts';
import { sqlTable } from './sql-source.ts';
import type { TableSpec } from './table-spec.ts';

const PAPERS: JsonArraySql = {
  file: 'pwc/papers-with-abstracts.json',
  fields: {
    paper_url: 'string', arxiv_id: 'string?', title: 'string', abstract: 'string?', url_abs: 'string?',
    url_pdf: 'string?', proceeding: 'string?', authors: 'string[]', tasks: 'string[]', date: 'date?',
  },
};

const LINKS: JsonArraySql = {
  file: 'pwc/links-between-papers-and-code.json',
  fields: {
    paper_url: 'string', paper_title: 'string', paper_arxiv_id: 'string?', repo_url: 'string',
    is_official: 'boolean', mentioned_in_paper: 'boolean', mentioned_in_github: 'boolean', framework: 'string?',
  },
};

export function pwcTables(inputDir: string): TableSpec[] {
  return [
    sqlTable({
      name: 'pwc_papers',
      columns: {
        paper_url: 'VARCHAR', arxiv_id: 'VARCHAR', title: 'VARCHAR', abstract: 'VARCHAR', url_abs: 'VARCHAR',
        url_pdf: 'VARCHAR', proceeding: 'VARCHAR', authors: 'VARCHAR[]', tasks: 'VARCHAR[]', date: 'DATE',
      },
      primaryKey: ['paper_url'],
      indexes: [['arxiv_id']],
    }, jsonArraySource(inputDir, PAPERS)),
    sqlTable({
      name: 'pwc_links',
      columns: {
        paper_url: 'VARCHAR', paper_title: 'VARCHAR', paper_arxiv_id: 'VARCHAR', repo_url: 'VARCHAR',
        is_official: 'BOOLEAN', mentioned_in_paper: 'BOOLEAN', mentioned_in_github: 'BOOLEAN', framework: 'VARCHAR',
      },
      primaryKey: ['paper_url', 'repo_url'],
    }, jsonArraySource(inputDir, LINKS)),
  ];
}
