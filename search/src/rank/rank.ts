/**
 * Ranks a stored lookup over a source's in-memory index (`../index/source-index.ts`): the page,
 * best first by the rules of `order.ts`, and the exact total of the documents matched.
 *
 * Every word must match (`../query/word-terms.ts`: its form, the last word's prefixes, its stems,
 * its typos), in one of the query's readings (`../query/readings.ts`: joined or split words). Typos
 * and splits are looked for only when the answers without them do not fill the page. When no
 * document holds every word, fewer words are tried (`../query/drop-words.ts`).
 */
import { fewerWords } from '../query/drop-words.ts';
import { readingsOf, type Reading } from '../query/readings.ts';
import { FORGIVING, type MatchRules, type ParsedQuery } from '../query/terms.ts';
import type { SourceIndex } from '../index/source-index.ts';
import { countMatches, countMatchesOfAny } from './count.ts';
import { matchAll, scratchOf } from './matches.ts';
import { pageOf } from './page.ts';
import { insertTop, ranksBefore, type RankedDoc } from './order.ts';
import { tierOf, titledDocs } from './tier.ts';

export type { RankedDoc } from './order.ts';

export interface Ranking {
  readonly total: number;
  /** The page, best first. */
  readonly docs: readonly RankedDoc[];
}

const NO_MATCH: Ranking = { total: 0, docs: [] };

/**
 * Every match of one reading, as ranked documents, given to `visit`; `worst`, when given, is the
 * last of a full page, and a match that does not rank before it is skipped before it is built.
 * Returns the count.
 */
function eachRanked(index: SourceIndex, reading: Reading, checkDeadline: () => void, visit: (ranked: RankedDoc) => void, worst?: () => RankedDoc | undefined): number {
  const matches = matchAll(index, reading.words, checkDeadline);
  if (matches.count === 0) return 0;
  const titled = titledDocs(index, scratchOf(index).titleBits, reading.phrase);
  const candidate = { doc: 0, typos: 0, tier: 0, outside: 0, stems: 0, score: 0 };
  for (let j = 0; j < matches.count; j++) {
    candidate.doc = matches.docs[j]!;
    candidate.outside = matches.outside[j]!;
    candidate.typos = reading.typos + matches.typos[j]!;
    candidate.tier = tierOf(titled, candidate.doc, candidate.outside);
    candidate.stems = matches.stems[j]!;
    candidate.score = matches.scores[j]!;
    const last = worst?.();
    if (last && !ranksBefore(candidate, last)) continue;
    visit({ ...candidate });
  }
  checkDeadline();
  return matches.count;
}

interface Words {
  readonly words: readonly string[];
  readonly phrase: readonly string[];
  readonly typing: string | undefined;
}

/** How the readings of one query are ranked: every match scored (`exhaustive`), or only the page's (`fast`). */
type RankReadings = (index: SourceIndex, readings: readonly Reading[], limit: number, checkDeadline: () => void) => Ranking;

/** The ranking of the words as one query (every word must match, in one of its readings). */
function rankWords(index: SourceIndex, query: Words, limit: number, rules: MatchRules, checkDeadline: () => void, rankReadings: RankReadings): Ranking {
  const readings = readingsOf(index, query.words, query.phrase, query.typing, rules, checkDeadline);
  return rankReadings(index, readings, limit, checkDeadline);
}

/** Every match of every reading scored and offered to the page: the reference the fast path is tested against. */
const exhaustive: RankReadings = (index, readings, limit, checkDeadline) => {
  const top: RankedDoc[] = [];
  if (readings.length === 1) {
    const total = eachRanked(index, readings[0]!, checkDeadline, (ranked) => insertTop(top, ranked, limit), () => (top.length === limit ? top[limit - 1] : undefined));
    return { total, docs: top };
  }
  // Several readings: a document counts once, at its best.
  const best = new Map<number, RankedDoc>();
  for (const reading of readings) {
    eachRanked(index, reading, checkDeadline, (ranked) => {
      const known = best.get(ranked.doc);
      if (!known || ranksBefore(ranked, known)) best.set(ranked.doc, ranked);
    });
  }
  for (const ranked of best.values()) insertTop(top, ranked, limit);
  return { total: best.size, docs: top };
}

/**
 * One reading's page and total. One word's matches are its documents, whose number (its df) is
 * kept per word; several words' are counted by the windows (`pageOf`), which score the windows
 * that may hold the page and count the others.
 */
function onePage(index: SourceIndex, reading: Reading, limit: number, checkDeadline: () => void): Ranking {
  const oneWord = reading.words.length === 1;
  const total = oneWord ? countMatches(index, reading.words, checkDeadline) : undefined;
  if (total === 0) return NO_MATCH;
  const page = pageOf(index, reading, limit, checkDeadline, !oneWord);
  return { total: total ?? page.total, docs: page.docs };
}

/**
 * Only the page's matches scored (`page.ts`), the total counted apart (`count.ts`, or `onePage`). With several
 * readings, a document's best entry is in its reading's own page, so the pages' union holds the page.
 */
const paged: RankReadings = (index, readings, limit, checkDeadline) => {
  if (readings.length === 1) return onePage(index, readings[0]!, limit, checkDeadline);
  const total = countMatchesOfAny(index, readings.map((reading) => reading.words), checkDeadline);
  if (total === 0) return NO_MATCH;
  const best = new Map<number, RankedDoc>();
  for (const reading of readings) {
    for (const ranked of pageOf(index, reading, limit, checkDeadline).docs) {
      const known = best.get(ranked.doc);
      if (!known || ranksBefore(ranked, known)) best.set(ranked.doc, ranked);
    }
  }
  const top: RankedDoc[] = [];
  for (const ranked of best.values()) insertTop(top, ranked, limit);
  return { total, docs: top };
};

/**
 * Readings this small are scored whole: their windows' bounds and page cost more than scoring
 * every match (the windows pay off on long lists, whose bounds can skip most of them). Scoring
 * whole sums into arrays over every document, a cache miss per posting once those arrays outgrow
 * the CPU's cache, where a window's sums stay in it: so on a source of many documents a reading
 * is small only below one posting per DOCUMENTS_PER_POSTING documents.
 */
const PAGED_FROM_POSTINGS = 50_000;
const DOCUMENTS_PER_POSTING = 256;

const fast: RankReadings = (index, readings, limit, checkDeadline) => {
  const threshold = Math.min(PAGED_FROM_POSTINGS, index.documents / DOCUMENTS_PER_POSTING);
  const small = readings.every((reading) => reading.words.reduce((sum, word) => sum + word.postings, 0) < threshold);
  return (small ? exhaustive : paged)(index, readings, limit, checkDeadline);
};

/**
 * The words ranked as one query, typos looked for only when the answers without them do not fill
 * the page: as in a search engine's bucket sort, a page of answers as typed (forms, prefixes,
 * stems, joined words) never waits for typo candidates, which would rank after them anyway. `total`
 * counts what was matched: the answers as typed, or those and the typos' when they were looked for.
 */
function rankBuckets(index: SourceIndex, query: Words, limit: number, rules: MatchRules, checkDeadline: () => void, rankReadings: RankReadings): Ranking {
  if (!rules.typos) return rankWords(index, query, limit, rules, checkDeadline, rankReadings);
  const asTyped = rankWords(index, query, limit, { ...rules, typos: false }, checkDeadline, rankReadings);
  return asTyped.total >= limit ? asTyped : rankWords(index, query, limit, rules, checkDeadline, rankReadings);
}

/**
 * The ranked page and total of a lookup. With FORGIVING rules, when no document holds every word,
 * fewer words are tried (`fewerWords`) until some document holds them.
 */
export function rankDocuments(index: SourceIndex, query: ParsedQuery, limit: number, checkDeadline: () => void, rules: MatchRules = FORGIVING): Ranking {
  return rankWith(index, query, limit, checkDeadline, rules, fast);
}

/** The same ranking through the windows (`page.ts`) whatever the readings' size: what `rank.fast.test.ts` checks. */
export function rankDocumentsPaged(index: SourceIndex, query: ParsedQuery, limit: number, checkDeadline: () => void, rules: MatchRules = FORGIVING): Ranking {
  return rankWith(index, query, limit, checkDeadline, rules, paged);
}

/** The same ranking with every match scored: the reference `rank.fast.test.ts` compares the fast path with. */
export function rankDocumentsExhaustive(index: SourceIndex, query: ParsedQuery, limit: number, checkDeadline: () => void, rules: MatchRules = FORGIVING): Ranking {
  return rankWith(index, query, limit, checkDeadline, rules, exhaustive);
}

function rankWith(index: SourceIndex, query: ParsedQuery, limit: number, checkDeadline: () => void, rules: MatchRules, rankReadings: RankReadings): Ranking {
  if (query.words.length === 0) return NO_MATCH;
  const ranking = rankBuckets(index, query, limit, rules, checkDeadline, rankReadings);
  if (ranking.total > 0 || !rules.dropWords) return ranking;
  for (const fewer of fewerWords(query.words)) {
    const kept = rankBuckets(index, { words: fewer, phrase: fewer, typing: query.typing }, limit, rules, checkDeadline, rankReadings);
    if (kept.total > 0) return kept;
  }
  return NO_MATCH;
}
