/**
 * The dashboard's static build under /dashboard (DECISIONS §10: same origin as the API, so the
 * session cookie is first-party). Pages get a strict CSP: only same-origin scripts, styles and
 * fetches, no inline script, and never framed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';

/** `npm run build -w dashboard` writes here; the API image copies it to the same place. */
export const DASHBOARD_DIST = join(import.meta.dirname, '../../../dashboard/dist');

export function dashboardHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    referrerPolicy: { policy: 'no-referrer' },
  });
}

export function dashboardStatic(dist = DASHBOARD_DIST): Router {
  const router = express.Router();
  if (!existsSync(join(dist, 'index.html'))) {
    router.get(/.*/, (_req, res) => {
      res.status(503).type('text/plain').send('The dashboard is not built. Run `npm run build -w dashboard` and restart.');
    });
    return router;
  }
  router.use(
    express.static(dist, {
      index: 'index.html',
      redirect: true,
      setHeaders(res, path) {
        // Vite names assets by content hash, so they never change; the page itself always revalidates.
        res.setHeader('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}
