/**
 * The one sanitiser for DuckDB's own words before a user sees them (they can echo paths and the
 * query): the error line and
 * the "Did you mean" hint stay; the echoed query, caret lines, statement-extraction prefixes,
 * absolute paths and the native binding's "Error in native callback" go.
 */

/** What the binding says when it could not turn the engine's message into a JS string. */
const NATIVE_CALLBACK = /Error in native callback/i;
const PREFIXES = /^(?:Failed to extract statements:\s*)?(?:Parser Error:\s*)?/;

/**
 * Out of memory, in memory or in the spill folder: DuckDB's text suggests settings the user cannot
 * change and may name the temp folder, so the user gets what they can do instead.
 */
export const OUT_OF_MEMORY_MESSAGE =
  'The query needed more memory and temporary disk than a query may use. Read fewer rows or columns, or aggregate them first.';

export function sanitizeEngineMessage(text: string): string {
  if (/^(?:[\w ]+: )?Out of Memory Error/.test(text)) return OUT_OF_MEMORY_MESSAGE;
  if (NATIVE_CALLBACK.test(text)) return 'the text could not be read as SQL (check for characters that are not valid UTF-8)';
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !/^LINE \d+:/.test(line) && !/^\s*\^\s*$/.test(line));
  const kept = lines.slice(0, 2).join(' ').replace(PREFIXES, '').slice(0, 500);
  // Absolute paths (POSIX and Windows) are internal; the user's own text never needs them.
  return kept.replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g, '[path]');
}
