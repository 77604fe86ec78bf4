import { describe, expect, it } from '@jest/globals';
import express from 'express';
import { listen } from '../../server.ts';
import { requestId } from './index.ts';

describe('requestId', () => {
  it('sets a UUID, or keeps a safe incoming id, and never echoes an unsafe one', async () => {
    const app = express();
    app.use(requestId());
    app.get('/', (_req, res) => void res.json({}));
    const server = await listen(app, 0, '127.0.0.1');
    const fresh = await fetch(server.url);
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(server.url, { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await fetch(server.url, { headers: { 'x-request-id': 'a b<script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await server.close();
  });
});
