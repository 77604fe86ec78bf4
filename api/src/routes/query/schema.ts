import { z } from 'zod';

/** SPEC POST /api/v1/query body. `sql` is checked by the shared validator, which words the errors. */
export const queryBody = z.object({
  sql: z.unknown(),
  // "exact JSON type of the list elements is unspecified": accept ids as strings or numbers.
  datasetIds: z.array(z.union([z.string(), z.number()])).max(20).optional(),
});

/** SPEC GET /api/v1/query.parquet|csv query parameters (`token` is read by authentication). */
export const queryParams = z.object({
  sql: z.string().optional(),
  datasets: z.string().optional(),
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
