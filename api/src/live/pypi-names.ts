/** PyPI project names: PEP 503 normalisation and near-match ranking over the PEP 691 name index. */

/** PEP 503: lowercase, and every run of `-`, `_` and `.` becomes one `-`. */
export function normalizePypiName(name: string): string {
  return name.trim().toLowerCase().replace(/[-_.]+/g, '-');
}

/** Levenshtein distance, giving up (returning max + 1) once it must exceed `max`. */
export function boundedEditDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

interface Candidate {
  name: string;
  rank: number;
  tie: number;
}

/**
 * Ranks normalised names against a normalised query: prefix matches first (shorter first), then
 * substring matches, then names within a small edit distance (typos). The exact name is excluded;
 * the client fetches it directly.
 */
export function nearMatches(query: string, names: readonly string[], count: number, maxDistance = 2): string[] {
  const found: Candidate[] = [];
  for (const name of names) {
    if (name === query) continue;
    if (name.startsWith(query)) found.push({ name, rank: 0, tie: name.length });
    else if (name.includes(query)) found.push({ name, rank: 1, tie: name.length });
    else if (query.length > 3) {
      const distance = boundedEditDistance(query, name, maxDistance);
      if (distance <= maxDistance) found.push({ name, rank: 2, tie: distance });
    }
  }
  found.sort((x, y) => x.rank - y.rank || x.tie - y.tie || x.name.localeCompare(y.name));
  return found.slice(0, count).map((c) => c.name);
}
