import { randomUUID } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import type { Logger } from '@uda/shared/logger';
import { MAX_SQL_LENGTH } from '@uda/shared/sql';
import { ApiError } from './errors/api-error.ts';
import { bodyFor } from './errors/body.ts';
import { ErrorCode } from './errors/codes.ts';

/**
 * The request line and headers may hold this many bytes. The SQL routes take the SQL in the URL
 * (SPEC: at most 10,000 characters), and one character URL-encodes to at most 9 bytes (a 3-byte
 * UTF-8 character as `%XX%XX%XX`; a 4-byte one is two characters for the length check). So the
 * longest valid SQL fits with 32 KiB to spare for the path, `datasets`, `token` and the headers,
 * where Node's default (16 KiB) refused a 2,000-character query of non-ASCII text.
 */
export const MAX_HEADER_BYTES = 9 * MAX_SQL_LENGTH + 32 * 1024;

export interface Listening {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** While requests keep arriving, a closing server waits at most this long for their connections to go. */
const DRAIN_MAX_MS = 1_000;
/** A server with no request started for this long is idle: its remaining connections are closed. */
const DRAIN_QUIET_MS = 100;

/**
 * Listens and resolves with the URL actually bound (port 0 picks one).
 *
 * Closing drains keep-alive connections before closing them: a client may send its next request on
 * an idle connection just as the server closes it, and sees a reset. So the server first stops
 * accepting connections (a new one is refused, and the client goes to another pod), and while
 * requests still arrive on the open ones (at most `DRAIN_MAX_MS`) each is answered with
 * `Connection: close`, so the client closes that connection instead of reusing it.
 */
export function listen(app: Express, port: number, host: string, { logger }: { logger?: Logger } = {}): Promise<Listening> {
  return new Promise((resolve, reject) => {
    let draining = false;
    let lastRequestAt = 0;
    const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      lastRequestAt = Date.now();
      if (draining) res.shouldKeepAlive = false;
      app(req, res);
    });
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, logger));
    server.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address();
      const boundPort = typeof address === 'object' && address ? address.port : port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        server,
        url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${boundPort}`,
        close: async () => {
          draining = true;
          // Stops accepting connections but, unlike http's close, leaves the idle ones open for now.
          const closed = new Promise<void>((done) => void NetServer.prototype.close.call(server, () => done()));
          const until = Date.now() + DRAIN_MAX_MS;
          while (Date.now() - lastRequestAt < DRAIN_QUIET_MS && Date.now() < until) await new Promise((r) => setTimeout(r, DRAIN_QUIET_MS / 2));
          // Now the idle ones (and http's request-timeout timer); in-flight responses finish first.
          server.close();
          await closed;
        },
      });
    });
  });
}

/**
 * A request Node refuses before Express sees it. Oversized headers get the flat JSON error with CORS
 * headers, so a browser page sees a readable 431 instead of a network error. The Origin header is
 * past the parser's limit, hence `*`: the body is a fixed message, and credentials are never allowed.
 * Anything else gets Node's own bare answer (400, or 408 for a request that timed out).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, logger: Logger | undefined): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  if (err.code !== 'HPE_HEADER_OVERFLOW') {
    // What Node answers when nobody listens for clientError.
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    return;
  }
  const error = new ApiError(ErrorCode.REQUEST_TOO_LARGE);
  const body = JSON.stringify(bodyFor(error, { style: 'flat', accountState: 'anonymous' }));
  const requestId = randomUUID();
  logger?.info({ requestId, status: error.status, maxHeaderBytes: MAX_HEADER_BYTES }, 'request refused: headers too large');
  socket.end(
    [
      `HTTP/1.1 ${error.status} Request Header Fields Too Large`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Access-Control-Allow-Origin: *',
      'Access-Control-Expose-Headers: X-Request-Id',
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
