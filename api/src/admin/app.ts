/**
 * The admin HTTP API (DECISIONS §5): its own port, bound to 127.0.0.1 by default, bearer ADMIN_TOKEN.
 * Its routes are declared in `routes.ts` (`visibility: 'internal'`) and listed in the one table (`routes/table.ts`); `npm run admin` is a thin client over it.
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { AccountNotFound } from '../accounts/store.ts';
import { ApiError } from '../errors/api-error.ts';
import { ErrorCode } from '../errors/codes.ts';
import { errorHandler, notFound } from '../errors/handler.ts';
import { mountInternalRoutes } from '../routes/mount.ts';
import { ADMIN_ROUTES } from '../routes/table.ts';
import type { Services } from '../services.ts';

export { adminSchemas, showAccount } from './accounts.ts';

function bearer(token: string): RequestHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return function adminAuth(req, _res, next) {
    const given = Buffer.from(req.get('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ApiError(ErrorCode.ADMIN_UNAUTHORIZED);
    next();
  };
}

export function buildAdminApp(services: Services): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(bearer(services.adminToken), express.json({ limit: '16kb' }));
  mountInternalRoutes(app, ADMIN_ROUTES, services);
  app.use(notFound());
  app.use(function accountNotFound(err: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) {
    next(err instanceof AccountNotFound ? new ApiError(ErrorCode.ADMIN_NOT_FOUND, { message: err.message }) : err);
  });
  app.use(errorHandler({ logger: services.logger }));
  return app;
}
