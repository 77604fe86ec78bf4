/**
 * Writes `docs/openapi.json` and the TypeScript types generated from it
 * (`api/test/generated/openapi-types.ts`); the API renders both (`api/src/openapi/render.ts`).
 * `npm run docs:openapi`; a test fails when either file differs.
 */
import { writeFile } from 'node:fs/promises';
import { OPENAPI_FILE, OPENAPI_TYPES_FILE, renderOpenApi, renderOpenApiTypes } from '@uda/api/openapi/render';

await writeFile(OPENAPI_FILE, renderOpenApi());
await writeFile(OPENAPI_TYPES_FILE, await renderOpenApiTypes());
console.log('docs/openapi.json and api/test/generated/openapi-types.ts updated');
