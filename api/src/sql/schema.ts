import { z } from 'zod';

/** SPEC POST /api/v1/query body. `sql` is checked by the shared validator, which words the errors. */
const BODY_MESSAGE = 'Send a JSON body with `sql` (string) and optional `datasetIds` (list).';

export const queryBody = z.object(
  {
    // Checked by the shared validator (after the credit check), which words its errors; documented as what it accepts.
    sql: z.unknown().meta({ description: 'One SELECT statement, at most 10,000 characters.', override: { type: 'string', maxLength: 10_000 } }),
    // "exact JSON type of the list elements is unspecified": accept ids as strings or numbers.
    datasetIds: z
      .array(z.union([z.string(), z.number()]), { error: BODY_MESSAGE })
      .max(20, 'At most 20 datasetIds.')
      .optional()
      .describe('Ids or slugs of your ready connected sheets to expose to the query.'),
  },
  { error: BODY_MESSAGE },
);

/** SPEC GET /api/v1/query.parquet|csv query parameters (`token` is read by authentication). */
const PARAMS_MESSAGE = 'Send `sql` (and optional `datasets`) once each as query parameters.';

export const queryParams = z.object({
  sql: z.string({ error: PARAMS_MESSAGE }).optional().describe('One SELECT statement, URL-encoded, at most 10,000 characters.'),
  datasets: z.string({ error: PARAMS_MESSAGE }).optional().describe('Comma-separated ids or slugs of your ready connected sheets to expose.'),
});

/** DECISIONS §6: the JSON answer. */
export const queryResponse = z.object({
  status: z.literal('success'),
  row_count: z.number().int().nonnegative(),
  rows: z.array(z.record(z.string(), z.unknown())),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  truncated: z.boolean(),
  sql_executed: z.string(),
});

export type QueryResponseBody = z.infer<typeof queryResponse>;

/** `a,b , c` → `['a','b','c']`; empty entries dropped. */
export function datasetList(text: string | undefined): string[] {
  return (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}
