import { describeSchema } from '@uda/shared/config';
import { loadSheetsWorkerConfig, sheetsWorkerConfigSchema, workerSettings } from './config.ts';

describe('sheets worker config', () => {
  it('needs only DATABASE_URL and defaults to a 50 MB limit, 3 attempts and a 5-minute lease', () => {
    const settings = workerSettings(loadSheetsWorkerConfig({ DATABASE_URL: 'postgres://x@h/db' }));
    expect(settings).toMatchObject({ leaseSeconds: 300, maxAttempts: 3, pollMs: 1000, limits: { maxBytes: 50 * 1024 * 1024, timeoutMs: 120_000 } });
  });

  it('refuses to start without DATABASE_URL, naming it', () => {
    expect(() => loadSheetsWorkerConfig({})).toThrow(/DATABASE_URL/);
  });

  it('refuses a lease shorter than the ingestion time limit', () => {
    expect(() => loadSheetsWorkerConfig({ DATABASE_URL: 'postgres://x@h/db', SHEETS_LEASE_SECONDS: '60', SHEETS_TIMEOUT_MS: '120000' })).toThrow(
      /SHEETS_LEASE_SECONDS: must be longer than SHEETS_TIMEOUT_MS/,
    );
  });

  it('documents every setting', () => {
    for (const setting of describeSchema(sheetsWorkerConfigSchema)) expect(setting.help).not.toBe('');
  });
});
