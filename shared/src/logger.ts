/**
 * Structured JSON logs (pino). Keys never reach a log line: the Authorization header is removed
 * and `token=` is redacted from every URL we log (DECISIONS §5).
 */
import { unescape as unescapeQuery } from 'node:querystring';
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export function createLogger(options: { name: string; level: LevelWithSilent }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.apiKey', '*.api_key'],
      censor: '[redacted]',
    },
  });
}

/**
 * The one reading of `token` query parameters: the redactor and authentication both call it, so a
 * name the redactor misses can never be a name authentication accepts. Names are decoded the way
 * Express's query parser decodes them (`%74oken` is `token`); a bracketed form (`token[]`,
 * `token[0]`) or another case (`TOKEN`) counts as a token parameter for redaction.
 */
interface QueryPart {
  readonly raw: string;
  readonly rawName: string;
  readonly name: string;
  readonly value: string | undefined;
}

const TOKEN_NAME = /^token(\[[^\]]*\])*$/i;

function queryParts(query: string): QueryPart[] {
  return query.split('&').map((raw) => {
    const eq = raw.indexOf('=');
    const rawName = eq < 0 ? raw : raw.slice(0, eq);
    return { raw, rawName, name: decodePart(rawName), value: eq < 0 ? undefined : decodePart(raw.slice(eq + 1)) };
  });
}

function decodePart(part: string): string {
  return unescapeQuery(part.replace(/\+/g, ' '));
}

function splitUrl(url: string): { path: string; query: string; hash: string } {
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt < 0 ? url : url.slice(0, hashAt);
  const hash = hashAt < 0 ? '' : url.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  if (queryAt < 0) return { path: beforeHash, query: '', hash };
  return { path: beforeHash.slice(0, queryAt), query: beforeHash.slice(queryAt + 1), hash };
}

/**
 * The API key a URL carries in `?token=`: the value of exactly one parameter named `token`. Any
 * other token-like parameter (`token[]=`, `TOKEN=`, a second `token=`) makes the URL carry none,
 * so the caller is refused rather than guessed at.
 */
export function queryToken(url: string): string | undefined {
  const tokens = queryParts(splitUrl(url).query).filter((part) => TOKEN_NAME.test(part.name));
  const [only] = tokens;
  if (tokens.length !== 1 || only?.name !== 'token' || !only.value) return undefined;
  return only.value;
}

/** `/wiki/x?token=service_abc&limit=2` → `/wiki/x?token=[redacted]&limit=2`, whatever the name's encoding. */
export function redactUrl(url: string): string {
  const { path, query, hash } = splitUrl(url);
  if (!query) return url;
  const parts = queryParts(query).map((part) => (TOKEN_NAME.test(part.name) ? `${part.rawName}=[redacted]` : part.raw));
  return `${path}?${parts.join('&')}${hash}`;
}
