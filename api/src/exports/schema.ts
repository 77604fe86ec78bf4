/** Request shapes of the export downloads (SPEC export routes; DECISIONS §7). */
import { z } from 'zod';

export const exportPath = z.object({
  name: z
    .string()
    .describe('`service.db`, `service.parquet.zip`, `service.csv.zip`, or a source id or alias (`gutenberg`, `books`, `census`, …).')
    .meta({ examples: ['service.parquet.zip', 'gutenberg'] }),
});

export const exportQuery = z.object({
  format: z.string({ error: 'format, table and version are single text values.' }).optional().describe('`csv` (default) or `parquet`; for a source only.'),
  table: z.string({ error: 'format, table and version are single text values.' }).optional().describe('One of the source\'s tables; default its primary table.'),
  version: z.string({ error: 'format, table and version are single text values.' }).optional().describe('Pin one of the kept export versions (the last 3).'),
});
