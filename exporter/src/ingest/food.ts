/**
 * USDA FoodData Central CSV files (SR Legacy layout): every field quoted, LF line endings.
 * `food` carries its category description and NDB number, joined in from the small lookup files.
 */
import { readCsv, requireColumns, toInteger } from './csv.ts';
import { csvRows, type CsvSql } from './csv-sql.ts';
import { InputError, type TableSpec } from './table-spec.ts';

const FOOD = 'food/food.csv';
const CATEGORY = 'food/food_category.csv';
const SR_LEGACY = 'food/sr_legacy_food.csv';
const NUTRIENT = 'food/nutrient.csv';
const FOOD_NUTRIENT = 'food/food_nutrient.csv';

/** The file's columns in order, typed as the table declares them; empty fields are NULL. */
const FOOD_NUTRIENT_CSV: CsvSql = {
  file: FOOD_NUTRIENT,
  columns: {
    id: 'BIGINT', fdc_id: 'INTEGER', nutrient_id: 'INTEGER', amount: 'DOUBLE', data_points: 'INTEGER', derivation_id: 'INTEGER',
    min: 'DOUBLE', max: 'DOUBLE', median: 'DOUBLE', footnote: 'VARCHAR', min_year_acquired: 'INTEGER',
  },
  select: 'id, fdc_id, nutrient_id, amount, data_points, derivation_id, min, max, median, nullif(footnote, \'\') AS footnote, min_year_acquired',
};

async function readMap(inputDir: string, file: string, key: string, value: string): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for await (const { line, values } of readCsv(inputDir, file)) {
    requireColumns(file, line, values, [key, value]);
    map.set(values[key]!, values[value]!);
  }
  return map;
}

export function foodTables(inputDir: string): TableSpec[] {
  return [
    {
      name: 'food',
      columns: {
        fdc_id: 'INTEGER',
        data_type: 'VARCHAR',
        description: 'VARCHAR',
        food_category_id: 'INTEGER',
        category: 'VARCHAR',
        ndb_number: 'INTEGER',
        publication_date: 'DATE',
      },
      primaryKey: ['fdc_id'],
      async *rows() {
        const categories = await readMap(inputDir, CATEGORY, 'id', 'description');
        const ndb = await readMap(inputDir, SR_LEGACY, 'fdc_id', 'NDB_number');
        for await (const { line, values } of readCsv(inputDir, FOOD)) {
          requireColumns(FOOD, line, values, ['fdc_id', 'data_type', 'description', 'food_category_id', 'publication_date']);
          const categoryId = values['food_category_id']!;
          if (categoryId !== '' && !categories.has(categoryId)) {
            throw new InputError(FOOD, line, `unknown food_category_id ${categoryId}`);
          }
          yield {
            fdc_id: toInteger(FOOD, line, 'fdc_id', values['fdc_id']!),
            data_type: values['data_type'],
            description: values['description'],
            food_category_id: toInteger(FOOD, line, 'food_category_id', categoryId),
            category: categories.get(categoryId) ?? null,
            ndb_number: toInteger(FOOD, line, 'NDB_number', ndb.get(values['fdc_id']!) ?? ''),
            publication_date: values['publication_date'] || null,
          };
        }
      },
    },
    {
      name: 'food_nutrients',
      columns: {
        id: 'BIGINT',
        fdc_id: 'INTEGER',
        nutrient_id: 'INTEGER',
        amount: 'DOUBLE',
        data_points: 'INTEGER',
        derivation_id: 'INTEGER',
        min: 'DOUBLE',
        max: 'DOUBLE',
        median: 'DOUBLE',
        footnote: 'VARCHAR',
        min_year_acquired: 'INTEGER',
      },
      primaryKey: ['id'],
      indexes: [['fdc_id']],
      // Tens of millions of rows in the full download: DuckDB reads and types them itself.
      csv: { inputDir, source: FOOD_NUTRIENT_CSV },
      rows: () => csvRows(inputDir, FOOD_NUTRIENT_CSV),
    },
    {
      name: 'food_nutrient_types',
      columns: { id: 'INTEGER', name: 'VARCHAR', unit_name: 'VARCHAR', nutrient_nbr: 'VARCHAR', rank: 'INTEGER' },
      primaryKey: ['id'],
      async *rows() {
        for await (const { line, values } of readCsv(inputDir, NUTRIENT)) {
          requireColumns(NUTRIENT, line, values, ['id', 'name', 'unit_name', 'nutrient_nbr', 'rank']);
          yield {
            id: toInteger(NUTRIENT, line, 'id', values['id']!),
            name: values['name'],
            unit_name: values['unit_name'],
            // nutrient_nbr is a code ("203", "204.1" in newer releases), not a quantity.
            nutrient_nbr: values['nutrient_nbr'] || null,
            rank: toInteger(NUTRIENT, line, 'rank', values['rank']!),
          };
        }
      },
    },
  ];
}
