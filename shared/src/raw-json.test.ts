import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { jsonWithRawField } from './raw-json.ts';

// JavaScript puts integer-like keys first in any object, so they would not keep the order given.
const key = fc.string().filter((k) => !/^(0|[1-9]\d*)$/.test(k));

describe('jsonWithRawField', () => {
  it('gives exactly the JSON.stringify text of the object with the raw field parsed, keys in order', () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue()), key, fc.jsonValue(), fc.dictionary(key, fc.jsonValue()), (before, field, value, after) => {
        fc.pre(!(field in before) && !(field in after) && Object.keys(before).every((k) => !(k in after)));
        const raw = Buffer.from(JSON.stringify(value));
        const expected = JSON.stringify({ ...before, [field]: value, ...after });
        expect(jsonWithRawField(before, field, raw, after).toString('utf8')).toBe(expected);
      }),
    );
  });

  it('copies the raw bytes as they are, non-ASCII included', () => {
    const raw = Buffer.from('[{"t":"Zoë — 😀"}]');
    expect(jsonWithRawField({}, 'rows', raw).toString('utf8')).toBe('{"rows":[{"t":"Zoë — 😀"}]}');
  });
});
