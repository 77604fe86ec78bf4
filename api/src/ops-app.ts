/**
 * /healthz, /readyz and /metrics on their own port (METRICS_PORT), so probes and scrapes never
 * touch the public limits.
 */
import express, { type Express } from 'express';
import type { Services } from './services.ts';

export function buildOpsApp(services: Services): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = services.state.ready && (await databaseAnswers(services));
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics());
  });
  return app;
}

async function databaseAnswers(services: Services): Promise<boolean> {
  try {
    await services.db.raw('select 1');
    return true;
  } catch {
    return false;
  }
}
