import { describe, expect, it } from '@jest/globals';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { listen } from '../server.ts';
import { oneLayer } from './one-layer.ts';

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append('X-Steps', name);
    next();
  };

async function answerOf(layer: RequestHandler): Promise<{ status: number; steps: string | null; body: string }> {
  const app = express();
  app.use(layer);
  app.use((_req, res) => void res.send('reached the route'));
  const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => void res.status(500).send(err.message);
  app.use(onError);
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const res = await fetch(server.url);
    return { status: res.status, steps: res.headers.get('x-steps'), body: await res.text() };
  } finally {
    await server.close();
  }
}

describe('oneLayer', () => {
  it('runs its handlers in order, then the next layer', async () => {
    expect(await answerOf(oneLayer(mark('a'), mark('b'), mark('c')))).toEqual({ status: 200, steps: 'a, b, c', body: 'reached the route' });
  });

  it('stops at a handler that answers (a CORS preflight), without reaching the next layer', async () => {
    const answer: RequestHandler = (_req, res) => void res.status(204).end();
    expect(await answerOf(oneLayer(mark('a'), answer, mark('c')))).toEqual({ status: 204, steps: 'a', body: '' });
  });

  it('hands an error passed to next to the error handler, skipping the rest', async () => {
    const fail: RequestHandler = (_req, _res, next) => next(new Error('refused'));
    expect(await answerOf(oneLayer(fail, mark('b')))).toEqual({ status: 500, steps: null, body: 'refused' });
  });

  it('reports a handler that would call next later instead of leaving the request hanging', async () => {
    const later: RequestHandler = function callsNextLater(_req, _res, next) {
      setTimeout(next, 1);
    };
    const answer = await answerOf(oneLayer(later));
    expect(answer.status).toBe(500);
    expect(answer.body).toContain('callsNextLater neither called next nor answered');
  });
});
