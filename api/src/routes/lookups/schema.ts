import { z } from 'zod';

/** The success body of the lookup routes (SPEC "Data lookup envelope"; fields in api/src/lookups/README.md). */
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
