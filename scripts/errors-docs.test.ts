import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '@uda/shared/config';
import { ERROR_CATALOG } from '@uda/api/errors/catalog';
import { ErrorCode } from '@uda/api/errors/codes';
import { parseApiConfig } from '@uda/api/config';
import { DEFAULT_LIMITS } from '@uda/api/limits';
import { exporterConfigSchema } from '@uda/exporter/config';
import { runnerConfigSchema } from '@uda/query-runner/config';
import { ERRORS_FILE, renderErrorCatalog } from './errors-docs.ts';

describe('docs/errors.md', () => {
  it('lists every error code with its status, when, billing and what to do (run `npm run docs:errors` to update)', async () => {
    const file = await readFile(ERRORS_FILE, 'utf8');
    expect(file).toBe(renderErrorCatalog());
    for (const code of Object.values(ErrorCode)) expect(file).toContain(`| \`${code}\` |`);
  });

  it('states the limits each service is configured with by default', () => {
    const runner = parseConfig(runnerConfigSchema, {});
    const api = parseApiConfig({});
    const exporter = parseConfig(exporterConfigSchema, {});
    const when = (code: ErrorCode) => ERROR_CATALOG[code].when;
    expect(when(ErrorCode.QUERY_TIMEOUT)).toContain(`longer than ${runner.QUERY_TIMEOUT_MS / 1000} seconds`);
    expect(when(ErrorCode.QUERY_RESULT_TOO_LARGE)).toContain(`over ${runner.QUERY_MAX_RESULT_BYTES / 1024 / 1024} MB`);
    expect(ERROR_CATALOG.EXPORT_LIMIT_EXCEEDED.action).toContain(`within ${runner.RESULT_TTL_SECONDS / 60} minutes`);
    expect(when(ErrorCode.UPLOAD_TOO_LARGE)).toContain(`(${api.SHEETS_MAX_UPLOAD_MB} MB by default)`);
    expect(when(ErrorCode.EXPORT_NOT_FOUND)).toContain(`the last ${exporter.EXPORT_KEEP_VERSIONS} are`);
    expect(when(ErrorCode.RATE_LIMITED)).toContain(`More than ${DEFAULT_LIMITS.burst.points} requests in ${DEFAULT_LIMITS.burst.windowS / 60} minutes`);
    expect(when(ErrorCode.REQUEST_LIMIT_EXCEEDED)).toContain(`(${DEFAULT_LIMITS.anonymous.points} successful lookups per ${DEFAULT_LIMITS.anonymous.windowS / 3600} hours`);
    expect(when(ErrorCode.EXPORT_LIMIT_EXCEEDED)).toContain(`made ${DEFAULT_LIMITS.exportDaily.toLocaleString('en-US')} export downloads`);
    expect(when(ErrorCode.SHEET_LIMIT_EXCEEDED)).toContain(`made ${DEFAULT_LIMITS.sheetDaily.toLocaleString('en-US')} connected-sheet requests`);
  });
});
