/**
 * `sendJson` answers with exactly the bytes `res.json` does (Date aside), over a real socket: plain
 * GETs small and large, non-ASCII text, a HEAD, and the conditional requests Express may answer 304.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { listen } from '../server.ts';
import { sendJson } from './send-json.ts';

const BODIES: Record<string, unknown> = {
  small: { status: 'success', data: { hello: 'world', n: 42 } },
  large: { status: 'success', data: { results: Array.from({ length: 60 }, (_, i) => ({ i, title: `row ${i}` })) } },
  unicode: { status: 'success', data: { query: 'Ærøskøbing café – 東京 🚀', n: null } },
};

let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.all('/express/:body', (req, res) => void res.json(BODIES[req.params.body as string]));
  app.all('/send-json/:body', (req, res) => sendJson(req, res, JSON.stringify(BODIES[req.params.body as string])));
  server = await listen(app, 0, '127.0.0.1');
});
afterAll(async () => {
  await server.close();
});

/** The whole answer as it came off the socket, its Date header blanked. */
function rawAnswer(method: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1').replace(/\r\nDate: [^\r]*/, '\r\nDate: -')));
    socket.on('error', reject);
    const lines = Object.entries({ Host: 'localhost', Connection: 'close', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`);
  });
}

describe('sendJson', () => {
  const cases: [string, string, Record<string, string>][] = [
    ['GET', 'small', {}],
    ['GET', 'large', {}],
    ['GET', 'unicode', {}],
    ['HEAD', 'small', {}],
    ['GET', 'small', { 'If-None-Match': '*' }],
    ['GET', 'small', { 'If-None-Match': '"abc"' }],
    ['GET', 'small', { 'If-Modified-Since': 'Fri, 27 Nov 2026 10:00:00 GMT' }],
  ];
  it.each(cases)('%s %s %j: the same bytes as res.json', async (method, body, headers) => {
    const expected = await rawAnswer(method, `/express/${body}`, headers);
    expect(expected).toMatch(/^HTTP\/1\.1 (200|304)/);
    expect(await rawAnswer(method, `/send-json/${body}`, headers)).toBe(expected);
  });
});
