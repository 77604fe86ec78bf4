/**
 * The one sanitiser for DuckDB's own words before a user sees them (issue 12): the error line and
 * the "Did you mean" hint stay; the echoed query, caret lines, statement-extraction prefixes,
 * absolute paths and the native binding's "Error in native callback" go.
 */

/** What the binding says when it could not turn the engine's message into a JS string. */
const NATIVE_CALLBACK = /Error in native callback/i;
const PREFIXES = /^(?:Failed to extract statements:\s*)?(?:Parser Error:\s*)?/;

export function sanitizeEngineMessage(text: string): string {
  if (NATIVE_CALLBACK.test(text)) return 'the text could not be read as SQL (check for characters that are not valid UTF-8)';
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !/^LINE \d+:/.test(line) && !/^\s*\^\s*$/.test(line));
  const kept = lines.slice(0, 2).join(' ').replace(PREFIXES, '').slice(0, 500);
  // Absolute paths (POSIX and Windows) are internal; the user's own text never needs them.
  return kept.replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g, '[path]');
}
