import { optionalCreditHeaders } from '../openapi/headers.ts';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';
import { type UsageHandlerDeps, usageHandler } from './handler.ts';
import { usageResponse } from './schema.ts';

export const usageRoutes: readonly RouteDeclaration<UsageHandlerDeps>[] = [
  declareRoute<UsageHandlerDeps>({
    method: 'get',
    visibility: 'public',
    path: '/api/v1/auth/usage',
    style: 'flat',
    doc: {
      path: '/api/v1/auth/usage',
      operationId: 'getUsage',
      summary: 'Request counts and limits of the caller',
      description:
        'With a key: the export/SQL daily cap of the account, and the balance in X-Credits-Remaining. Without one: the ' +
        'anonymous allowance of the caller\'s IP. Counts toward neither.',
      tag: 'Account',
      auth: 'optional',
      responses: {
        200: {
          description: 'The usage result.',
          content: { 'application/json': usageResponse },
          headers: { 'X-Credits-Remaining': optionalCreditHeaders['X-Credits-Remaining'] },
        },
      },
      errors: [],
    },
    handler: (s) => usageHandler(s),
  }),
];
