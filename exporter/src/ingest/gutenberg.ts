/**
 * Project Gutenberg's official `pg_catalog.csv`: minimal RFC-4180 quoting, titles that span lines,
 * `; `-separated lists, and authors with their life dates and a bracketed role
 * (`Wells, H. G. (Herbert George), 1866-1946 [Illustrator]`).
 */
import { readCsv, requireColumns, toInteger } from './csv.ts';
import { InputError, type TableSpec } from './table-spec.ts';

const FILE = 'gutenberg/pg_catalog.csv';
const HEADER = ['Text#', 'Type', 'Issued', 'Title', 'Language', 'Authors', 'Subjects', 'LoCC', 'Bookshelves'];

export interface Author {
  readonly name: string;
  readonly dates: string | null;
  readonly role: string;
}

/** `; ` separates authors; a role in brackets follows the name; otherwise the role is Author. */
export function parseAuthors(field: string): Author[] {
  return splitList(field).map((entry) => {
    const roleMatch = /^(.*?)\s*\[([^\]]+)\]$/.exec(entry);
    const person = roleMatch ? roleMatch[1]! : entry;
    const role = roleMatch ? roleMatch[2]! : 'Author';
    // Life dates are the last comma-separated part when it holds a digit: `1743-1826`, `-1832?`, `1st cent.`
    const datesMatch = /^(.*),\s*([^,]*\d[^,]*)$/.exec(person);
    return datesMatch ? { name: datesMatch[1]!, dates: datesMatch[2]!, role } : { name: person, dates: null, role };
  });
}

export function splitList(field: string): string[] {
  return field === '' ? [] : field.split('; ').map((s) => s.trim()).filter((s) => s !== '');
}

export function gutenbergTables(inputDir: string): TableSpec[] {
  return [
    {
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
      async *rows() {
        for await (const { line, values } of readCsv(inputDir, FILE)) {
          requireColumns(FILE, line, values, HEADER);
          const issued = values['Issued']!;
          if (!/^\d{4}-\d{2}-\d{2}$/.test(issued)) throw new InputError(FILE, line, `Issued is not a date: ${issued}`);
          yield {
            text_id: toInteger(FILE, line, 'Text#', values['Text#']!),
            type: values['Type'],
            issued,
            title: values['Title'],
            languages: splitList(values['Language']!),
            authors: parseAuthors(values['Authors']!),
            subjects: splitList(values['Subjects']!),
            locc: splitList(values['LoCC']!),
            bookshelves: splitList(values['Bookshelves']!),
          };
        }
      },
    },
  ];
}
