/** The tables the dashboard's SQL console can query. */
import type { Db } from '../../db/index.ts';
import { type RouteDeclaration, declareRoute } from '../../routes/declare.ts';
import { SESSION_ERRORS, accountOf, sessionDoc } from '../declare.ts';
import { tablesAnswer, type TablesAnswer } from '../schemas.ts';
import { tablesOf } from './tables.ts';

export const tableRoutes: readonly RouteDeclaration<{ readonly db: Db }>[] = [
  declareRoute<{ readonly db: Db }>({
    method: 'get',
    path: '/tables',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({ method: 'get', path: '/tables', summary: 'The public tables and the account\'s ready sheets', status: 200, answer: tablesAnswer, errors: SESSION_ERRORS }),
    handler: (s) =>
      async function tablesRoute(req, res) {
        res.json({ status: 'success', ...(await tablesOf(s.db, accountOf(req))) } satisfies TablesAnswer);
      },
  }),
];
