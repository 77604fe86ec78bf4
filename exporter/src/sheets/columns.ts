/**
 * Column names of an uploaded sheet become SQL identifiers users type (`SELECT total FROM sheet`),
 * so they are normalised to lower-case ASCII snake case, unique within the sheet.
 */
export const MAX_COLUMN_NAME_LENGTH = 63; // PostgreSQL's identifier limit; also keeps names readable

export function normalizeColumnNames(names: readonly string[]): string[] {
  const taken = new Set<string>();
  return names.map((name, index) => {
    const base = normalizeOne(name) || `column_${index + 1}`;
    const unique = dedupe(base, taken);
    taken.add(unique);
    return unique;
  });
}

function normalizeOne(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, ''); // "café" → "cafe"
  const snake = ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const safe = /^[0-9]/.test(snake) ? `c_${snake}` : snake;
  return safe.slice(0, MAX_COLUMN_NAME_LENGTH).replace(/_+$/, '');
}

/** `name`, then `name_2`, `name_3`…, shortening the base so the suffix still fits. */
function dedupe(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, MAX_COLUMN_NAME_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
