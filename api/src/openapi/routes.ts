/**
 * The API's own description: `GET /api/v1/openapi.json` (generated from the route declarations)
 * and `GET /docs`, a reference page rendered by Scalar from that document. Scalar's browser bundle
 * is served from node_modules, so the page needs nothing outside this service.
 */
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { type RouteDeclaration, declareRoute } from '../routes/declare.ts';

const SCALAR_BUNDLE = createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Unified Data API reference</title>
</head>
<body>
<div id="app"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// No default fonts (they come from a CDN); no proxy, so "try it" requests go to this server only.
const INIT = `Scalar.createApiReference('#app', ${JSON.stringify({
  url: '/api/v1/openapi.json',
  withDefaultFonts: false,
  proxyUrl: '',
  hideClientButton: true,
  telemetry: false,
  // Hosted Scalar features (AI agent, developer toolbar) need scalar.com; this page works offline.
  agent: { disabled: true },
  showDeveloperTools: 'never',
})});\n`;

// The app's CSP is `default-src 'none'` (a data API); the page needs its own scripts, styles and the document.
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

function send(type: string, body: () => string | Buffer | object, csp?: string): RequestHandler {
  return function sendDocsAsset(_req, res) {
    if (csp) res.setHeader('Content-Security-Policy', csp);
    res.setHeader('Cache-Control', 'no-cache');
    const content = body();
    if (type === 'application/json') res.json(content);
    else res.type(type).send(content);
  };
}

const openApiDocumentSchema = z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) });

export function docsRoutes(document: () => object): readonly RouteDeclaration<unknown>[] {
  return [
    declareRoute({
      method: 'get',
      visibility: 'public',
      path: '/api/v1/openapi.json',
      style: 'flat',
      doc: {
        path: '/api/v1/openapi.json',
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI 3.1 document',
        tag: 'Meta',
        auth: 'none',
        responses: { 200: { description: 'The document.', content: { 'application/json': openApiDocumentSchema } } },
        errors: [],
      },
      handler: () => send('application/json', document),
    }),
    declareRoute({ method: 'get', visibility: 'public', path: '/docs', style: 'plain', undocumented: 'an HTML page rendering the document', handler: () => send('html', () => PAGE, PAGE_CSP) }),
    declareRoute({ method: 'get', visibility: 'public', path: '/docs/scalar.js', style: 'plain', undocumented: 'the reference page\'s script', handler: () => scalarBundle() }),
    declareRoute({ method: 'get', visibility: 'public', path: '/docs/init.js', style: 'plain', undocumented: 'the reference page\'s script', handler: () => send('text/javascript', () => INIT) }),
  ];
}

function scalarBundle(): RequestHandler {
  return function sendScalarBundle(_req, res, next) {
    res.sendFile(SCALAR_BUNDLE, { headers: { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' } }, (error) => {
      if (error) next(error);
    });
  };
}
