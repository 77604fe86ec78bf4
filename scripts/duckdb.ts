/**
 * `npm run -s duckdb -- "SELECT … FROM 'result.parquet'"`: runs one statement in the DuckDB this
 * repository already installs and prints the rows as JSON lines, so the README's walkthrough needs
 * no separate DuckDB install. Local files only: no extensions are loaded.
 */
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: npm run -s duckdb -- "<one SQL statement>"');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
const connection = await instance.connect();
try {
  const reader = await connection.runAndReadAll(sql);
  for (const row of reader.getRowObjectsJson()) console.log(JSON.stringify(row));
} finally {
  connection.closeSync();
  instance.closeSync();
}
