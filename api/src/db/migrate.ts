/**
 * `node api/src/db/migrate.ts`: brings the database to the latest schema and exits. Kubernetes runs
 * it as a Helm pre-install/pre-upgrade hook, so pods never start against an older schema. knex
 * takes a lock table, so two runs at once are safe.
 */
import { createLogger } from '@uda/shared/logger';
import { loadMigrateConfig } from '../config.ts';
import { openPostgres } from './postgres.ts';
import { migrationSource } from './migrations/index.ts';

const config = loadMigrateConfig();
const logger = createLogger({ name: 'migrate', level: config.LOG_LEVEL });
const db = openPostgres(config.DATABASE_URL, 2);
try {
  const [batch, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  logger.info({ batch, applied }, applied.length ? 'migrations applied' : 'schema already up to date');
} catch (error) {
  logger.error({ err: error }, 'migration failed');
  process.exitCode = 1;
} finally {
  await db.destroy();
}
