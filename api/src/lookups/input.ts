/**
 * Input checks of a data lookup (SPEC "GET /{source}/{keywords}"; issue: "keywords are capped at a
 * sensible length and checked for encoding, giving a clear 400"). Plain functions over raw text, so
 * the REST route (raw path segment) and the MCP tool (JSON string) give the same answers.
 */
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';

/** Long enough for any title or phrase; short enough to keep upstream URLs and SQL bounded. */
export const MAX_KEYWORDS_CHARS = 200;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 50;

// C0 and C1 controls, including NUL, tabs and newlines: never part of a search phrase.
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this check.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function invalid(message: string): ApiError {
  return new ApiError(ErrorCode.INVALID_INPUT, { message });
}

/** A URL path segment as the caller sent it (still percent-encoded) → checked keywords. */
export function decodeKeywords(rawSegment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawSegment);
  } catch {
    throw invalid('Keywords must be URL-encoded UTF-8 text (for example "pride%20and%20prejudice").');
  }
  return checkKeywords(decoded);
}

/** Text keywords (MCP passes them unencoded) → trimmed, checked keywords. */
export function checkKeywords(text: string): string {
  if (CONTROL.test(text)) throw invalid('Keywords must not contain control characters.');
  if (!text.isWellFormed()) throw invalid('Keywords must be valid UTF-8 text.');
  const keywords = text.trim();
  if (!keywords) throw invalid('Keywords must not be empty.');
  if ([...keywords].length > MAX_KEYWORDS_CHARS) throw invalid(`Keywords must be at most ${MAX_KEYWORDS_CHARS} characters.`);
  return keywords;
}
