import { z } from 'zod';

/** SPEC Resources → Usage result. */
export const usageResponse = z.object({
  account_state: z.enum(['authenticated', 'anonymous']),
  usage: z.object({
    requests_remaining: z.number().int().min(0),
    request_limit: z.number().int().min(0),
  }),
});

export type UsageResponse = z.infer<typeof usageResponse>;
