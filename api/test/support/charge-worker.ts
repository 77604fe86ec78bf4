/**
 * Child process for the ledger concurrency test: fires N concurrent charges at one account and
 * prints one JSON line with what it was told. Usage: node charge-worker.ts <dbUrl> <accountId> <n> <amountMicro> <worker>
 */
import { AccountStore } from '../../src/accounts/store.ts';
import { Ledger } from '../../src/billing/index.ts';
import { openDb } from '../../src/db/index.ts';

const [dbUrl = '', accountId = '', n = '0', amount = '0', worker = '0'] = process.argv.slice(2);
const db = openDb({ databaseUrl: dbUrl, poolMax: 20, dataDir: '/tmp' });
const ledger = new Ledger(db, new AccountStore(db));
const results = await Promise.all(
  Array.from({ length: Number(n) }, (_, i) =>
    ledger.charge({
      accountId,
      amountMicro: Number(amount),
      // Every worker also retries the same 10 keys: each must be charged at most once overall.
      idempotencyKey: i < 10 ? `shared-${i}` : `w${worker}-${i}`,
      requestId: `w${worker}-${i}`,
    }),
  ),
);
const fresh = results.filter((r) => r.ok && !r.duplicate);
process.stdout.write(
  `${JSON.stringify({
    charged: fresh.reduce((sum, r) => sum + (r.ok ? r.chargedMicro : 0), 0),
    ok: fresh.length,
    duplicate: results.filter((r) => r.ok && r.duplicate).length,
    refused: results.filter((r) => !r.ok).length,
  })}\n`,
);
await db.destroy();
