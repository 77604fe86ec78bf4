/**
 * Slugs and SQL names of connected sheets (DECISIONS §8: addressed by UUID or slug; exposed to
 * SQL under the slug). Pure functions, tested without HTTP.
 */
const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** Why a caller's slug is refused, or undefined when it is fine. A UUID would make `{id}` ambiguous. */
export function slugProblem(slug: string): string | undefined {
  if (!SLUG.test(slug)) return 'The slug must be 1-63 characters of a-z, 0-9, "-" or "_", starting with a letter or digit.';
  if (isUuid(slug)) return 'The slug must not be a UUID.';
  return undefined;
}

/** A slug made from a name or file name: lower case, runs of other characters as one "-". */
export function slugFrom(text: string): string {
  const base = text
    .toLowerCase()
    .replace(/\.[a-z0-9]+$/, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 55)
    .replace(/-+$/, '');
  return base === '' || isUuid(base) ? 'sheet' : base;
}

/**
 * The table name a sheet gets in SQL: the runner accepts `^[a-z][a-z0-9_]{0,62}$`, so hyphens
 * become underscores and a slug starting with a digit gets a `t_` prefix.
 */
export function sqlNameOf(slug: string): string {
  const name = slug.replaceAll('-', '_');
  return /^[a-z]/.test(name) ? name : `t_${name}`.slice(0, 63);
}
