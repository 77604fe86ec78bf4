/**
 * The spec's textual SQL rules (SPEC "POST /api/v1/query" rules 1–4, DECISIONS §6). They run before
 * the parser and are deliberately blunt: a word is refused wherever it appears, string literals and
 * comments included, because the cost of a false refusal is a reworded query and the cost of a miss
 * is an escape attempt reaching the engine.
 */

export const MAX_SQL_LENGTH = 10_000;

export const ONLY_SELECT_MESSAGE = 'Only SELECT statements are allowed.';

/** Keywords, spelled as the spec's list writes them; they match as whole words, any case. */
const KEYWORDS = [
  'CREATE', 'DROP', 'ALTER', 'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'TRUNCATE', 'COPY', 'ATTACH',
  'DETACH', 'INSTALL', 'LOAD', 'GLOB',
] as const;

/** Function names also match as the start of a longer name (`read_csv_auto`, `read_json_objects`). */
const FUNCTION_PREFIXES = ['read_csv', 'read_parquet', 'read_json', 'read_ndjson', 'postgres_scan'] as const;

/** Two-word operations match with any whitespace (newlines, tabs) between the words. */
const PHRASES = [
  { op: 'EXPORT DATABASE', pattern: /(?<![\w$])export\s+database(?![\w$])/i },
  { op: 'IMPORT DATABASE', pattern: /(?<![\w$])import\s+database(?![\w$])/i },
] as const;

// Identifiers in DuckDB may contain letters, digits, `_` and `$`; a "whole word" is bounded by
// anything else. `created_at` is one word, so it is not CREATE.
const wholeWord = (word: string) => new RegExp(`(?<![\\w$])${word}(?![\\w$])`, 'i');
const prefixWord = (word: string) => new RegExp(`(?<![\\w$])${word}`, 'i');

const RULES: readonly { op: string; pattern: RegExp }[] = [
  ...KEYWORDS.map((op) => ({ op, pattern: wholeWord(op) })),
  ...PHRASES,
  ...FUNCTION_PREFIXES.map((op) => ({ op, pattern: prefixWord(op) })),
];

export type TextCheck = { ok: true } | { ok: false; message: string };

/** The first rule the text breaks, in the order a user would fix them: presence, length, words. */
export function checkSqlText(sql: unknown): TextCheck {
  if (typeof sql !== 'string' || sql.trim() === '') {
    return { ok: false, message: 'SQL is required: send one SELECT statement in the `sql` field.' };
  }
  if (sql.length > MAX_SQL_LENGTH) {
    return {
      ok: false,
      message: `SQL is too long: ${sql.length} characters, the limit is ${MAX_SQL_LENGTH.toLocaleString('en-US')}.`,
    };
  }
  // A lone surrogate cannot reach the engine as UTF-8; say so instead of letting the binding fail.
  if (!sql.isWellFormed()) return { ok: false, message: 'SQL must be valid Unicode text: it holds an unpaired surrogate.' };
  const op = disallowedOperation(sql);
  if (op) return { ok: false, message: `Disallowed operation: ${op}` };
  return { ok: true };
}

/** The spec spelling of the first disallowed word in the text, or undefined. */
export function disallowedOperation(sql: string): string | undefined {
  // NFKC folds full-width and other compatibility look-alikes (ＤＲＯＰ) to ASCII, so a look-alike
  // is refused as the word it imitates. Look-alikes that NFKC keeps apart (Cyrillic letters)
  // are not keywords to DuckDB either, so they cannot act as one.
  const text = sql.normalize('NFKC');
  return RULES.find((rule) => rule.pattern.test(text))?.op;
}
