/**
 * Structured JSON logs (pino). Keys never reach a log line: the Authorization header is removed
 * and `token=` is redacted from every URL we log (DECISIONS §5).
 */
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

const TOKEN_PARAM = /([?&]token=)[^&#]*/gi;

/** `/wiki/x?token=service_abc&limit=2` → `/wiki/x?token=[redacted]&limit=2`. */
export function redactUrl(url: string): string {
  return url.replace(TOKEN_PARAM, '$1[redacted]');
}
