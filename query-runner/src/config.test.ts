import { describe, it, expect } from '@jest/globals';
import { ConfigError, describeSchema, parseConfig } from '@uda/shared/config';
import { runnerConfigSchema } from './config.ts';

describe('runner config', () => {
  it('has the spec limits as defaults', () => {
    const config = parseConfig(runnerConfigSchema, {});
    expect(config).toMatchObject({ QUERY_TIMEOUT_MS: 30_000, QUERY_MAX_ROWS: 1_000, QUERY_MAX_RESULT_BYTES: 64 * 1024 * 1024, RESULT_TTL_SECONDS: 300 });
    expect(config.QUERY_LOCK_TTL_MS).toBeGreaterThan(config.QUERY_TIMEOUT_MS);
  });

  it('treats an empty optional variable as unset', () => {
    const config = parseConfig(runnerConfigSchema, { RUNNER_METRICS_PORT: '', REDIS_URL: '' });
    expect(config.RUNNER_METRICS_PORT).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('refuses a bad value with the variable name in the message', () => {
    expect(() => parseConfig(runnerConfigSchema, { QUERY_MAX_ROWS: '0' })).toThrow(ConfigError);
    expect(() => parseConfig(runnerConfigSchema, { QUERY_MAX_ROWS: '0' })).toThrow(/QUERY_MAX_ROWS/);
  });

  it('documents every setting', () => {
    expect(describeSchema(runnerConfigSchema).filter((f) => f.help === '')).toEqual([]);
  });
});
