import { MAX_COLUMN_NAME_LENGTH, normalizeColumnNames } from './columns.ts';

describe('normalizeColumnNames', () => {
  it('lower-cases and turns runs of other characters into one underscore, trimmed', () => {
    expect(normalizeColumnNames(['First Name', '  Total (€)  ', 'e-mail.Address'])).toEqual(['first_name', 'total', 'e_mail_address']);
  });

  it('strips accents instead of dropping the letter', () => {
    expect(normalizeColumnNames(['Café', 'Überweisung'])).toEqual(['cafe', 'uberweisung']);
  });

  it('prefixes names that would start with a digit', () => {
    expect(normalizeColumnNames(['2024 sales'])).toEqual(['c_2024_sales']);
  });

  it('names empty or symbol-only headers by position', () => {
    expect(normalizeColumnNames(['a', '', '???'])).toEqual(['a', 'column_2', 'column_3']);
  });

  it('numbers duplicates from _2, skipping names already present', () => {
    expect(normalizeColumnNames(['Name', 'name', 'NAME', 'name_2'])).toEqual(['name', 'name_2', 'name_3', 'name_2_2']);
  });

  it('caps the length, also when a duplicate suffix is added', () => {
    const long = 'x'.repeat(100);
    const [first, second] = normalizeColumnNames([long, long]);
    expect(first).toHaveLength(MAX_COLUMN_NAME_LENGTH);
    expect(second).toHaveLength(MAX_COLUMN_NAME_LENGTH);
    expect(second?.endsWith('_2')).toBe(true);
  });
});
