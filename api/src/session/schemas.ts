/**
 * The dashboard's session API (`/dashboard/api`, DECISIONS §10) as zod schemas, declared once: the
 * route table (`routes.ts`) validates its input and describes its answers with them, and the
 * dashboard imports the inferred wire types (`@uda/api/session/schemas`). Only zod here, so the
 * dashboard's type check pulls in nothing of the server.
 */
import { z } from 'zod';

/** The tiers by name (`TIERS` in `limits.ts`, which the dashboard cannot import). */
const TIER_NAMES = ['free', 'developer', 'pro'] as const;
const success = z.literal('success');

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

// Inputs.
const newEmail = z.email({ error: 'Enter a valid email address.' }).max(254);
const newPassword = z
  .string({ error: 'Enter a password.' })
  .min(PASSWORD_MIN_LENGTH, `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`)
  .max(PASSWORD_MAX_LENGTH, `The password is at most ${PASSWORD_MAX_LENGTH} characters.`);
export const credentialsBody = z.object({ email: newEmail, password: newPassword });
/** The token of an emailed link: 32 random bytes in base64url; anything else is refused before a lookup. */
const linkToken = z.string({ error: 'The link has no token. Open the whole link from the email.' }).regex(/^[A-Za-z0-9_-]{43}$/, 'This link is not valid. Check that it was copied whole, or ask for a new one.');
export const verifyBody = z.object({ token: linkToken });
export const forgotBody = z.object({ email: newEmail });
export const resetBody = z.object({ token: linkToken, password: newPassword });
export const signinBody = z.object({ email: z.string().max(254), password: z.string().max(PASSWORD_MAX_LENGTH) });
export const keyNameBody = z.object({ name: z.string().trim().min(1, 'Give the key a name.').max(100, 'The name is at most 100 characters.') });
export const revealBody = z.object({ password: z.string().max(PASSWORD_MAX_LENGTH).optional() });
export const paymentBody = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('upgrade'), tier: z.enum(TIER_NAMES) }),
  z.object({ kind: z.literal('topoff'), amount_usd: z.string().regex(/^\d{1,5}(\.\d{1,2})?$/, 'Give the amount in USD, e.g. 10 or 25.50.') }),
]);
/** `?page=`: any text is read as a whole page number, out-of-range and unreadable values clamped (0 … 10,000). */
export const ledgerQuery = z.object({
  page: z
    .unknown()
    .optional()
    .transform((page) => Math.max(0, Math.min(10_000, Number.parseInt(String(page ?? '0'), 10) || 0)))
    .meta({ override: { type: 'integer', minimum: 0, maximum: 10_000 } }),
});

// Answers.
export const doneAnswer = z.object({ status: success });
/** Verification, resend, forgot and reset: what happened, in words for the page. */
export const emailAnswer = z.object({ status: success, message: z.string() });
export type EmailAnswer = z.infer<typeof emailAnswer>;
export const signedInAnswer = z.object({ status: success, email: z.string() });
export type SignedInAnswer = z.infer<typeof signedInAnswer>;
export const sessionAnswer = z.object({
  status: success,
  email: z.string(),
  tier: z.enum(TIER_NAMES),
  /** False until the account opens the link sent to its email: SQL, exports and sheet uploads wait for it. */
  email_verified: z.boolean(),
  csrf_token: z.string(),
});
export type SessionAnswer = z.infer<typeof sessionAnswer>;

export const keyItemSchema = z.object({
  name: z.string(),
  prefix: z.string(),
  status: z.enum(['active', 'deactivated', 'revoked']),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  legacy: z.boolean(),
});
export type KeyItem = z.infer<typeof keyItemSchema>;
export const keysAnswer = z.object({ status: success, keys: z.array(keyItemSchema) });
export type KeysAnswer = z.infer<typeof keysAnswer>;
/** A key in plain text: created, replaced or revealed. */
export const keyAnswer = z.object({ status: success, key: z.string() });
export type KeyAnswer = z.infer<typeof keyAnswer>;

export const ledgerEntrySchema = z.object({
  kind: z.enum(['charge', 'refund']),
  amount_micro: z.number().int(),
  breakdown: z.array(z.object({ source: z.string(), rows: z.number(), costMicro: z.number() })),
  query_id: z.string().nullable(),
  created_at: z.string(),
});
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;
export const ledgerAnswer = z.object({ status: success, entries: z.array(ledgerEntrySchema), page: z.number().int(), has_more: z.boolean() });
export type LedgerAnswer = z.infer<typeof ledgerAnswer>;

export const paymentRequestSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  kind: z.enum(['upgrade', 'topoff']),
  tier: z.enum(TIER_NAMES).nullable(),
  amount_micro: z.number().int().nullable(),
  status: z.enum(['pending', 'approved', 'rejected']),
  created_at: z.string(),
  decided_at: z.string().nullable(),
});
export type PaymentRequestItem = z.infer<typeof paymentRequestSchema>;
export const paymentsAnswer = z.object({ status: success, requests: z.array(paymentRequestSchema), how_it_works: z.string() });
export type PaymentsAnswer = z.infer<typeof paymentsAnswer>;
export const paymentAnswer = z.object({ status: success, request: paymentRequestSchema });
export type PaymentAnswer = z.infer<typeof paymentAnswer>;

const columnSchema = z.object({ name: z.string(), type: z.string() });
/** The SQL console's table browser: the public tables and the caller's ready sheets. */
export const tablesAnswer = z.object({
  status: success,
  tables: z.array(z.object({ name: z.string(), source: z.string(), description: z.string(), columns: z.array(columnSchema) })),
  sheets: z.array(z.object({ slug: z.string(), table: z.string(), columns: z.array(columnSchema) })),
});
export type TablesAnswer = z.infer<typeof tablesAnswer>;
