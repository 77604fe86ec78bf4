/**
 * The error body schemas the OpenAPI document publishes are the bodies `bodyFor` builds: every
 * code, in every route style, with and without the optional details.
 */
import { describe, expect, it } from '@jest/globals';
import { ApiError } from './api-error.ts';
import { bodyFor } from './body.ts';
import { ErrorCode, type ErrorStyle } from './codes.ts';
import { errorBodySchema } from './schemas.ts';

const STYLES: readonly ErrorStyle[] = ['lookup', 'flat', 'plain'];

describe('error body schemas', () => {
  for (const code of Object.values(ErrorCode)) {
    it(`${code}: bodyFor matches errorBodySchema in every style`, () => {
      const errors = [
        new ApiError(code),
        new ApiError(code, { message: 'Something specific.', limit: 50, credits: { remainingMicro: 10_000, requestCostMicro: 60_000 } }),
      ];
      for (const style of STYLES) {
        for (const accountState of ['anonymous', 'authenticated'] as const) {
          for (const error of errors) {
            const body = bodyFor(error, { style, accountState });
            const parsed = errorBodySchema(code, style).safeParse(body);
            expect({ code, style, body, issues: parsed.error?.issues ?? [] }).toEqual({ code, style, body, issues: [] });
          }
        }
      }
    });
  }

  it('a schema refuses a body of another shape (the check can fail)', () => {
    const flat = bodyFor(new ApiError(ErrorCode.AUTH_REQUIRED), { style: 'flat', accountState: 'anonymous' });
    expect(errorBodySchema(ErrorCode.LOOKUP_NOT_FOUND, 'lookup').safeParse(flat).success).toBe(false);
  });
});
