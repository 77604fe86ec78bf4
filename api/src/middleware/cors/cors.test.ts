import { describe, expect, it } from '@jest/globals';
import express from 'express';
import { listen } from '../../server.ts';
import { cors } from './index.ts';

describe('cors', () => {
  it('lets browsers read our X-* and RateLimit-* headers and answers preflights', async () => {
    const app = express();
    app.use(cors({ origins: ['https://app.example'] }));
    app.get('/', (_req, res) => void res.json({}));
    const server = await listen(app, 0, '127.0.0.1');
    const res = await fetch(server.url, { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = res.headers.get('access-control-expose-headers') ?? '';
    for (const h of ['X-Credit-Cost', 'X-Credits-Remaining', 'X-RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id']) {
      expect(exposed).toContain(h);
    }
    const other = await fetch(server.url, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(server.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    await server.close();
  });

  it('lets a browser send the conditional headers of a revalidating range read', async () => {
    const app = express();
    app.use(cors({ origins: ['*'] }));
    const server = await listen(app, 0, '127.0.0.1');
    const asked = 'range, if-range, if-match, if-none-match, if-modified-since, if-unmodified-since';
    const preflight = await fetch(server.url, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'access-control-request-headers': asked },
    });
    expect(preflight.status).toBe(204);
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
    for (const h of asked.split(', ')) expect(allowed).toContain(h);
    await server.close();
  });
});
