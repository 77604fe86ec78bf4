/** The SQL console's table browser: the public tables of the catalog and the account's ready sheets. */
import { SOURCES } from '@uda/shared/catalog';
import type { Db } from '../../db/index.ts';
import { sqlNameOf } from '../../sheets/names.ts';
import { listDatasets } from '../../sheets/store.ts';
import type { TablesAnswer } from '../schemas.ts';

export async function tablesOf(db: Db, accountId: string): Promise<Omit<TablesAnswer, 'status'>> {
  const sheets = (await listDatasets(db, accountId)).filter((d) => d.status === 'ready');
  return {
    tables: SOURCES.flatMap((src) => src.tables.map((t) => ({ name: t.name, source: src.id, description: t.description, columns: [] }))),
    sheets: sheets.map((d) => ({ slug: d.slug, table: sqlNameOf(d.slug), columns: d.columns ?? [] })),
  };
}
