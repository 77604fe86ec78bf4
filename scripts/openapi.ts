/**
 * Writes `docs/openapi.json`, the OpenAPI 3.1 document the API serves at `/api/v1/openapi.json`,
 * generated from the route declarations. `npm run docs:openapi`; a test fails when the file differs.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openApiDocument } from '../api/src/routes/index.ts';

export const OPENAPI_FILE = join(import.meta.dirname, '..', 'docs', 'openapi.json');

export function renderOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

if (process.argv[1] === import.meta.filename) {
  await writeFile(OPENAPI_FILE, renderOpenApi());
  console.log('docs/openapi.json updated');
}
