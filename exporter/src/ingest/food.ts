/**
 * USDA FoodData Central CSV files (SR Legacy layout): every field quoted, LF line endings.
 * `food` carries its category description and NDB number, joined in from the small lookup files.
 */
import { csvSource, type CsvSql } from './csv-sql.ts';
import { sqlTable } from './sql-source.ts';
import type { TableSpec } from './table-spec.ts';

const NUTRIENT = 'food/nutrient.csv';
const FOOD_NUTRIENT = 'food/food_nutrient.csv';

/** `food.csv` with its category description and NDB number joined in from the small lookup files. */
const FOOD_CSV: CsvSql = {
  file: 'food/food.csv',
  columns: { fdc_id: 'INTEGER', data_type: 'VARCHAR', description: 'VARCHAR', food_category_id: 'INTEGER', publication_date: 'DATE' },
  lookups: {
    categories: { file: 'food/food_category.csv', columns: { id: 'INTEGER', code: 'VARCHAR', description: 'VARCHAR' }, select: 'id, description' },
    legacy: { file: 'food/sr_legacy_food.csv', columns: { fdc_id: 'INTEGER', NDB_number: 'INTEGER' }, select: 'fdc_id, "NDB_number" AS ndb_number' },
  },
  checks: [{
    // The integer rule runs first, so the cast only meets digits.
    failsWhen: "food_category_id <> '' AND NOT EXISTS (SELECT 1 FROM categories WHERE id = food_category_id::INTEGER)",
    reason: "'unknown food_category_id ' || food_category_id",
  }],
  select: 'f.fdc_id, f.data_type, f.description, f.food_category_id, c.description AS category, l.ndb_number, f.publication_date',
  joins: 'LEFT JOIN categories c ON c.id = f.food_category_id LEFT JOIN legacy l ON l.fdc_id = f.fdc_id',
  // FoodData Central lists foods by fdc_id.
  order: 'f.fdc_id',
};

/** Tens of millions of rows in the full download. The file's columns in order, typed as the table declares them. */
const FOOD_NUTRIENT_CSV: CsvSql = {
  file: FOOD_NUTRIENT,
  columns: {
    id: 'BIGINT', fdc_id: 'INTEGER', nutrient_id: 'INTEGER', amount: 'DOUBLE', data_points: 'INTEGER', derivation_id: 'INTEGER',
    min: 'DOUBLE', max: 'DOUBLE', median: 'DOUBLE', footnote: 'VARCHAR', min_year_acquired: 'INTEGER',
  },
  select: 'id, fdc_id, nutrient_id, amount, data_points, derivation_id, min, max, median, nullif(footnote, \'\') AS footnote, min_year_acquired',
};

const NUTRIENT_CSV: CsvSql = {
  file: NUTRIENT,
  columns: { id: 'INTEGER', name: 'VARCHAR', unit_name: 'VARCHAR', nutrient_nbr: 'VARCHAR', rank: 'INTEGER' },
  // nutrient_nbr is a code ("203", "204.1" in newer releases), not a quantity.
  select: "id, name, unit_name, nullif(nutrient_nbr, '') AS nutrient_nbr, rank",
};

export function foodTables(inputDir: string): TableSpec[] {
  return [
    sqlTable({
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
    }, csvSource(inputDir, FOOD_CSV)),
    sqlTable({
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
    }, csvSource(inputDir, FOOD_NUTRIENT_CSV)),
    sqlTable({
      name: 'food_nutrient_types',
      columns: { id: 'INTEGER', name: 'VARCHAR', unit_name: 'VARCHAR', nutrient_nbr: 'VARCHAR', rank: 'INTEGER' },
      primaryKey: ['id'],
    }, csvSource(inputDir, NUTRIENT_CSV)),
  ];
}
