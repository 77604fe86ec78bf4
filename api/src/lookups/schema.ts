import { z } from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT } from './input.ts';

const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_LIMIT}.`;

/** `?limit=` of the lookup routes: absent → 10; otherwise a whole number from 1 to 50. */
export const lookupQuery = z.object({
  limit: z
    .string({ error: LIMIT_MESSAGE })
    .regex(/^\d{1,3}$/, LIMIT_MESSAGE)
    .refine((text) => Number(text) >= 1 && Number(text) <= MAX_LIMIT, LIMIT_MESSAGE)
    .optional()
    // The handler receives the number, defaulted (`inputOf`).
    .transform((text) => (text === undefined ? DEFAULT_LIMIT : Number(text)))
    .describe(`Results per page, 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}.`),
});

/** The success body of the lookup routes (SPEC "Data lookup envelope"; fields per source in docs/sources.md). */
export const lookupEnvelope = z.object({
  status: z.literal('success'),
  account_state: z.enum(['authenticated', 'anonymous']),
  data: z.object({
    source: z.string(),
    query: z.string(),
    results: z.array(z.record(z.string(), z.unknown())).min(1).max(50),
    total: z.number().int().min(0).nullable(),
    stale: z.object({ message: z.string(), cached_at: z.iso.datetime().nullable() }).optional(),
  }),
});

export type LookupEnvelopeBody = z.infer<typeof lookupEnvelope>;
