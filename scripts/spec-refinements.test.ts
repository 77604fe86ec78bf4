/**
 * The contract and the service never disagree silently: every place where `docs/DECISIONS.md`
 * refines `docs/SPEC.md` carries an anchor (`<a id="refines-…">`), and the contract links to each
 * one from the text it refines. A refinement without a mark, or a mark whose anchor is gone,
 * fails here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const docs = resolve(import.meta.dirname, '..', 'docs');
const decisions = readFileSync(resolve(docs, 'DECISIONS.md'), 'utf8');
const spec = readFileSync(resolve(docs, 'SPEC.md'), 'utf8');

const refinements = [...decisions.matchAll(/<a id="(refines-[a-z0-9-]+)"><\/a>/g)].map((match) => match[1]);
const marks = [...spec.matchAll(/^> Refined by \[[^\]]+\]\(DECISIONS\.md#(refines-[a-z0-9-]+)\)\.$/gm)].map((match) => match[1]);

describe('the contract marks every refinement', () => {
  it('DECISIONS names its refinements, each once', () => {
    expect(refinements.length).toBeGreaterThan(0);
    expect(new Set(refinements).size).toBe(refinements.length);
  });

  it('links every refinement DECISIONS names from the place in SPEC it refines', () => {
    const unmarked = refinements.filter((id) => !marks.includes(id));
    expect(unmarked).toEqual([]);
  });

  it('links only to refinements that exist', () => {
    const dangling = marks.filter((id) => !refinements.includes(id));
    expect(dangling).toEqual([]);
  });

  it('writes every mention of DECISIONS in SPEC as a mark the checks above read', () => {
    const links = [...spec.matchAll(/\(DECISIONS\.md#[^)]*\)/g)].length;
    expect(links).toBe(marks.length);
  });
});
