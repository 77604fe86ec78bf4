/**
 * Every table the exporter builds, from each source's ingest module. The test below this module
 * checks that these are exactly the catalog's tables.
 */
import { censusTables } from './ingest/census.ts';
import { foodTables } from './ingest/food.ts';
import { gutenbergTables } from './ingest/gutenberg.ts';
import { liveTables } from './ingest/live.ts';
import type { LiveCopyReader } from './ingest/live-copies.ts';
import { pwcTables } from './ingest/pwc.ts';
import { secTables } from './ingest/sec.ts';
import type { TableSpec } from './ingest/table-spec.ts';

export async function allTableSpecs(inputDir: string, copies?: LiveCopyReader): Promise<TableSpec[]> {
  return [
    ...liveTables(inputDir, copies),
    ...gutenbergTables(inputDir),
    ...(await censusTables(inputDir)),
    ...foodTables(inputDir),
    ...pwcTables(inputDir),
    ...secTables(inputDir),
  ];
}
