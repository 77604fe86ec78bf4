/** The sheet record's wire shape (DECISIONS §8), zod only: the dashboard imports it through `@uda/api/sheets/schema`. */
import { z } from 'zod';

export const datasetRecordSchema = z.object({
  id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(['processing', 'ready', 'failed']),
  row_count: z.number().int().nonnegative().nullable(),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  error: z.string().optional(),
});
export type DatasetRecord = z.infer<typeof datasetRecordSchema>;
