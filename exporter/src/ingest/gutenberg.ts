/**
 * Project Gutenberg's official `pg_catalog.csv`: minimal RFC-4180 quoting, titles that span lines,
 * `; `-separated lists, and authors with their life dates and a bracketed role
 * (`Wells, H. G. (Herbert George), 1866-1946 [Illustrator]`). DuckDB reads it; the lists and the
 * authors are split in SQL.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { csvSource, type CsvSql } from './csv-sql.ts';
import { ident, sqlTable } from './sql-source.ts';
import type { TableSpec } from './table-spec.ts';

export interface Author {
  readonly name: string;
  readonly dates: string | null;
  readonly role: string;
}

/** `; ` separates entries; each is trimmed and empty ones dropped, so '' is the empty list. */
function listSql(text: string): string {
  return `list_filter(list_transform(string_split(${text}, '; '), s -> trim(s, chr(32) || chr(9) || chr(10) || chr(13))), s -> s <> '')`;
}

/** A role in brackets follows the name; otherwise the role is Author. */
const ROLE = String.raw`^(.*?)\s*\[([^\]]+)\]$`;
/** Life dates are the last comma-separated part when it holds a digit: `1743-1826`, `-1832?`, `1st cent.` */
const DATES = String.raw`^(.*),\s*([^,]*\d[^,]*)$`;

/** The authors field as a list of {name, dates, role}. */
function authorsSql(text: string): string {
  const person = `CASE WHEN regexp_matches(e, '${ROLE}') THEN regexp_extract(e, '${ROLE}', 1) ELSE e END`;
  const role = `CASE WHEN regexp_matches(e, '${ROLE}') THEN regexp_extract(e, '${ROLE}', 2) ELSE 'Author' END`;
  const dated = `regexp_matches(p.person, '${DATES}')`;
  return `list_transform(list_transform(${listSql(text)}, e -> {'person': ${person}, 'role': ${role}}),
    p -> {'name': CASE WHEN ${dated} THEN regexp_extract(p.person, '${DATES}', 1) ELSE p.person END,
          'dates': CASE WHEN ${dated} THEN regexp_extract(p.person, '${DATES}', 2) END,
          'role': p.role})`;
}

/** The SQL above, run on one field (for tests of the rules). */
export async function parseAuthors(field: string): Promise<Author[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT ${authorsSql('$1::VARCHAR')} AS authors`, [field]);
    return reader.getRowObjectsJson()[0]!.authors as unknown as Author[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const CATALOG_CSV: CsvSql = {
  file: 'gutenberg/pg_catalog.csv',
  columns: {
    'Text#': 'INTEGER', Type: 'VARCHAR', Issued: 'VARCHAR', Title: 'VARCHAR', Language: 'VARCHAR',
    Authors: 'VARCHAR', Subjects: 'VARCHAR', LoCC: 'VARCHAR', Bookshelves: 'VARCHAR',
  },
  checks: [{
    failsWhen: `NOT regexp_full_match("Issued", '\\d{4}-\\d{2}-\\d{2}') OR try_cast("Issued" AS DATE) IS NULL`,
    reason: `'Issued is not a date: ' || "Issued"`,
  }],
  select: [
    `${ident('Text#')} AS text_id`, '"Type" AS type', '"Issued"::DATE AS issued', '"Title" AS title',
    `${listSql('"Language"')} AS languages`, `${authorsSql('"Authors"')} AS authors`, `${listSql('"Subjects"')} AS subjects`,
    `${listSql('"LoCC"')} AS locc`, `${listSql('"Bookshelves"')} AS bookshelves`,
  ].join(', '),
};

export function gutenbergTables(inputDir: string): TableSpec[] {
  return [
    sqlTable({
      name: 'gutenberg',
      columns: {
        text_id: 'INTEGER',
        type: 'VARCHAR',
        issued: 'DATE',
        title: 'VARCHAR',
        languages: 'VARCHAR[]',
        authors: 'STRUCT(name VARCHAR, dates VARCHAR, role VARCHAR)[]',
        subjects: 'VARCHAR[]',
        locc: 'VARCHAR[]',
        bookshelves: 'VARCHAR[]',
      },
      primaryKey: ['text_id'],
    }, csvSource(inputDir, CATALOG_CSV)),
  ];
}
