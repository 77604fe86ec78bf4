/**
 * "Forgot password" answers alike for an email with an account and one without (DECISIONS §5
 * "Email"): this prints the answer time (median, p90) for each, measured in interleaved rounds in
 * one run, and their ratio, as a prober sending one request at a time sees them: each request
 * waits until the previous one's background work (token and email) is done. It also prints the
 * API process's CPU per request including that background work, which differs by design. Real
 * PostgreSQL, Redis and a real SMTP server.
 *
 *   npm run bench:forgot            (BENCH_ROUNDS=10 BENCH_PER_ROUND=20 by default)
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { openTestContext } from '@uda/test-support/api-harness';
import { startTestSmtp } from '@uda/test-support/smtp';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 20);

const ctx = await openTestContext();
const smtp = await startTestSmtp();
const api = await ctx.start({ config: { TRUST_PROXY_HOPS: '1', SMTP_URL: smtp.url } });
let address = 0;
const forgot = async (email: string): Promise<number> => {
  // A new address per request keeps the per-address limit out of the measurement.
  const n = ++address;
  const started = performance.now();
  const res = await fetch(`${api.url}/dashboard/api/password/forgot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
    body: JSON.stringify({ email }),
  });
  await res.arrayBuffer();
  if (res.status !== 202) throw new Error(`forgot answered ${res.status}`);
  return performance.now() - started;
};

const known: string[] = [];
for (let i = 0; i < ROUNDS * PER_ROUND; i++) {
  const account = await api.services.accounts.create({ email: `bench-${i}@example.com`, tier: 'free', emailVerified: false });
  await api.services.sessions.createUser({ accountId: account.id, email: `bench-${i}@example.com`, passwordHash: 'scrypt$bench' });
  known.push(`bench-${i}@example.com`);
}

const samples = { known: [] as number[], unknown: [] as number[] };
const cpuMicros = { known: 0, unknown: 0 };
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 ? (['unknown', 'known'] as const) : (['known', 'unknown'] as const)) {
    const cpu = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) {
      const email = kind === 'known' ? (known[round * PER_ROUND + i] as string) : `nobody-${round}-${i}@example.com`;
      samples[kind].push(await forgot(email));
      await api.services.mail.settled();
    }
    const used = process.cpuUsage(cpu);
    cpuMicros[kind] += used.user + used.system;
  }
}
await api.services.mail.close();

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] as number;
const count = ROUNDS * PER_ROUND;
const row = (kind: 'known' | 'unknown') =>
  `${kind.padEnd(8)} answer median ${quantile(samples[kind], 0.5).toFixed(2)} ms  p90 ${quantile(samples[kind], 0.9).toFixed(2)} ms  CPU with background work ${(cpuMicros[kind] / count).toFixed(0)} µs/request`;
console.log(`forgot-password answers, ${count} per kind in ${ROUNDS} interleaved rounds (${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
console.log(row('known'));
console.log(row('unknown'));
console.log(`ratio known/unknown: answer median ${(quantile(samples.known, 0.5) / quantile(samples.unknown, 0.5)).toFixed(2)}, p90 ${(quantile(samples.known, 0.9) / quantile(samples.unknown, 0.9)).toFixed(2)}`);
console.log(`emails received by the SMTP server: ${smtp.received.length} (one per known email)`);
await api.close();
await ctx.close();
await smtp.close();
