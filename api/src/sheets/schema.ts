/** Request and response shapes of the connected-sheet routes (DECISIONS §8, SPEC Resources). */
import { z } from 'zod';
import { datasetRecordSchema } from './record-schema.ts';

export const MAX_SEARCH_TEXT = 500;

export const searchQuery = z.object({
  q: z
    .string({ error: 'Give the search text as ?q=.' })
    .min(1, 'Give the search text as ?q=.')
    .max(MAX_SEARCH_TEXT, `The search text is at most ${MAX_SEARCH_TEXT} characters.`),
});

export const sheetQueryBody = z.object({
  sql: z.string({ error: 'Give the SQL as {"sql": "..."}.' }).min(1, 'Give the SQL as {"sql": "..."}.'),
});

export const uploadFields = z.object({
  name: z.string().max(200, 'The name is at most 200 characters.').optional(),
  slug: z.string().optional(),
});

export const datasetId = z.object({ id: z.string().describe('The sheet\'s UUID or its slug.') });

/** The multipart upload of `POST /api/v1/datasets` and `PUT /api/v1/datasets/{id}/file` (read by busboy, not validated here). */
export const uploadBody = z.object({
  file: z.string().meta({ format: 'binary' }).describe('The file: CSV, TSV, JSON, NDJSON or Parquet.'),
  name: uploadFields.shape.name.describe('A display name; default the file name.'),
  slug: uploadFields.shape.slug.describe('A friendly id, unique among your sheets; default derived from the name.'),
});

export const createdResponse = z.object({ id: z.uuid(), slug: z.string(), status: z.literal('processing') });

export const sheetQuotaSchema = z
  .object({
    sheets: z.number().int().describe('Sheets the account holds now.'),
    max_sheets: z.number().int().describe("Sheets the account's plan allows."),
    bytes: z.number().int().describe('Bytes of the uploaded files of those sheets.'),
    max_bytes: z.number().int().describe("Bytes the account's plan allows."),
  })
  .describe("The account's sheets quota (per plan) and what it uses; an upload past it is 403 SHEET_QUOTA_EXCEEDED.");

export const listResponse = z.object({ status: z.literal('success'), datasets: z.array(datasetRecordSchema), quota: sheetQuotaSchema });

const row = z.record(z.string(), z.unknown());
export const searchResponse = z.object({ status: z.literal('success'), row_count: z.number().int(), rows: z.array(row) });
export const queryResponse = searchResponse.extend({ sql_executed: z.string() });

/** The wire types the dashboard's sheets page reads (`@uda/api/sheets/schema`). */
export type SheetRecord = z.infer<typeof datasetRecordSchema>;
export type SheetQuota = z.infer<typeof sheetQuotaSchema>;
export type SheetListAnswer = z.infer<typeof listResponse>;
export type SheetSearchAnswer = z.infer<typeof searchResponse>;
export type SheetCreatedAnswer = z.infer<typeof createdResponse>;
