/**
 * The wire shape of the dashboard's usage answer (`GET /dashboard/api/usage`), declared once: the
 * API builds it (`usage.ts`) and the dashboard imports the inferred type (`@uda/api/session/usage-schema`).
 * Only zod here, so the dashboard's type check pulls in nothing of the server.
 */
import { z } from 'zod';

const dailyCap = z.object({ used: z.number().int(), limit: z.number().int() });

/** Balance and buckets (DECISIONS §3 "One balance"), the next reset, today's caps, this month's spend per day per source. */
export const usageSummarySchema = z.object({
  tier: z.string(),
  balance_micro: z.number().int(),
  grant_micro: z.number().int(),
  topoff_micro: z.number().int(),
  next_reset: z.string(),
  today: z.object({ export_sql: dailyCap, sheets: dailyCap }),
  spend_by_day: z.array(z.object({ day: z.string(), source: z.string(), cost_micro: z.number().int() })),
});
export type UsageSummary = z.infer<typeof usageSummarySchema>;

/** The route's answer: the summary and how payments work here. */
export const usageAnswerSchema = usageSummarySchema.extend({ payments: z.string() });
export type UsageAnswer = z.infer<typeof usageAnswerSchema>;
