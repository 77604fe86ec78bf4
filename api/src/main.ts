/**
 * Composition root (STYLE §5): builds the services once, starts the public API, the ops port
 * (/healthz, /readyz, /metrics) and the admin API. `runApi(config, wiring)` runs it with graceful
 * SIGTERM handling: `node api/src/main.ts` standalone, and the start script (`scripts/api.ts`) with
 * the embedded sheets worker wired in (`@uda/shared/sheets-worker`: the API does not import the
 * exporter's code).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildAdminApp } from './admin/app.ts';
import { buildApp } from './app.ts';
import { type ApiConfig, loadApiConfig } from './config.ts';
import { buildOpsApp } from './ops-app.ts';
import { listen } from './server.ts';
import { type ServiceOverrides, type Services, buildServices, closeServices } from './services.ts';
import type { StartEmbeddedSheetsWorker } from '@uda/shared/sheets-worker';

export interface RunningApi {
  readonly url: string;
  readonly metricsUrl: string;
  readonly adminUrl: string;
  /** Set on the first embedded start only: the Free demo account's key. */
  readonly demoKey: string | undefined;
  readonly services: Services;
  /** Readiness off, drain in-flight requests (up to SHUTDOWN_GRACE_MS), then close everything. */
  close(): Promise<void>;
}

/** What the process that starts the API wires in from other workspaces, through declared interfaces. */
export interface ApiWiring {
  /** The embedded default's sheets worker (the exporter's `startEmbeddedSheetsWorker`). */
  readonly startSheetsWorker?: StartEmbeddedSheetsWorker;
}

export async function startApi(config: ApiConfig, overrides: ServiceOverrides = {}, wiring: ApiWiring = {}): Promise<RunningApi> {
  const services = await buildServices(config, overrides);
  const demoKey = config.DATABASE_URL ? undefined : await ensureDemoAccount(services);
  const sheetsWorker = config.DATABASE_URL ? undefined : startEmbeddedWorker(services, wiring);
  const api = await listen(buildApp(services), config.PORT, config.HOST, { logger: services.logger });
  const ops = await listen(buildOpsApp(services), config.METRICS_PORT, config.HOST);
  const admin = await listen(buildAdminApp(services), config.ADMIN_PORT, config.ADMIN_HOST);
  services.logger.info({ url: api.url, metricsUrl: ops.url, adminUrl: admin.url, embedded: !config.DATABASE_URL }, 'api listening');
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      services.state.ready = false;
      const grace = new Promise<void>((resolve) => setTimeout(resolve, config.SHUTDOWN_GRACE_MS).unref());
      await Promise.race([Promise.all([api.close(), admin.close()]), grace]);
      api.server.closeAllConnections();
      admin.server.closeAllConnections();
      await ops.close();
      ops.server.closeAllConnections();
      await sheetsWorker?.stop();
      await closeServices(services, { keepDb: Boolean(overrides.db) });
    })());
  return { url: api.url, metricsUrl: ops.url, adminUrl: admin.url, demoKey, services, close };
}

/**
 * Embedded default: ingestion runs in this process on the same PGlite; with DATABASE_URL it is its
 * own process (`node exporter/src/sheets/main.ts`).
 */
function startEmbeddedWorker(services: Services, { startSheetsWorker }: ApiWiring) {
  if (!startSheetsWorker) {
    services.logger.warn('no sheets worker in this process: uploaded sheets stay queued (start with `npm start`, or run exporter/src/sheets/main.ts)');
    return undefined;
  }
  const logger = services.logger.child({ component: 'sheets-worker' });
  return startSheetsWorker({ db: services.db, store: services.store, logger, maxUploadMb: services.config.SHEETS_MAX_UPLOAD_MB });
}

/** Embedded default: on first start, a Free demo account and a ready-to-use key. */
async function ensureDemoAccount(services: Services): Promise<string | undefined> {
  if ((await services.accounts.count()) > 0) return undefined;
  const account = await services.accounts.create({ email: 'demo@localhost', tier: 'free' });
  return services.keys.create(account.id, 'demo');
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** Starts the API and stops it gracefully on SIGTERM or SIGINT. */
export async function runApi(config: ApiConfig, wiring: ApiWiring = {}): Promise<void> {
  const running = await startApi(config, {}, wiring);
  if (running.demoKey) {
    process.stdout.write(
      `\nDemo account (Free tier) created. Try:\n  curl -H "Authorization: Bearer ${running.demoKey}" ${running.url}/api/v1/auth/usage\n\n`,
    );
  }
  const stop = (signal: string) => {
    running.services.logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        running.services.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (isEntryPoint()) await runApi(loadApiConfig());
