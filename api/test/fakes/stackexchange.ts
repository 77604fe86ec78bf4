/**
 * Stack Exchange fake. The recording is a 2.2 `/questions` answer, structurally the same as a
 * `/search/advanced` one (SOURCES.md explains the substitution). Like the real API, every answer is
 * compressed: gzip with `content-encoding` by default, and other encodings in their own modes.
 */
import { deflateSync, gzipSync } from 'node:zlib';
import { recorded, startFake } from './upstream.ts';
import type { FakeAnswer, FakeUpstream } from './upstream.ts';

export type SeMode = 'gzip-unlabelled' | 'deflate' | 'gzip-bomb' | 'throttle' | 'throttle-no-wait' | 'backoff' | 'bad-parameter';

const gzipJson = (doc: unknown, status = 200): FakeAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'gzip' },
  body: gzipSync(JSON.stringify(doc)),
});

// The error wrapper the API documents (https://api.stackexchange.com/docs/error-handling).
const seError = (id: number, name: string, message: string) => gzipJson({ error_id: id, error_name: name, error_message: message }, 400);

export function startFakeStackExchange(): Promise<FakeUpstream<SeMode>> {
  const questions = JSON.parse(recorded('stackexchange-questions.json').toString('utf8')) as Record<string, unknown>;
  return startFake<SeMode>((url, mode) => {
    if (url.pathname !== '/2.3/search/advanced') return seError(404, 'no_method', 'method not recognized');
    switch (mode) {
      case 'ok':
        return gzipJson(questions);
      case 'backoff':
        return gzipJson({ ...questions, backoff: 10 });
      case 'gzip-unlabelled':
        return { ...gzipJson(questions), headers: { 'content-type': 'application/json; charset=utf-8' } };
      case 'deflate':
        return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'deflate' }, body: deflateSync(JSON.stringify(questions)) };
      case 'gzip-bomb':
        // 6 MB of JSON that compresses to a few KB: the size cap must apply after decompression.
        return gzipJson({ ...questions, padding: ' '.repeat(6 * 1024 * 1024) });
      case 'throttle':
        return seError(502, 'throttle_violation', 'too many requests from this IP, more requests available in 42 seconds');
      case 'throttle-no-wait':
        return seError(502, 'throttle_violation', 'too many requests from this IP');
      case 'bad-parameter':
        return seError(400, 'bad_parameter', 'site is required');
      default:
        return undefined;
    }
  });
}
