/**
 * The runner runs SQL for whoever reaches its port, so every route but the probes asks for the
 * bearer token its callers share (the NetworkPolicy stays as the outer wall). Compared in
 * constant time over SHA-256 digests, so neither the token's bytes nor its length leak by timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function requireRunnerToken({ token }: { token: string }): RequestHandler {
  if (token.length < 32) throw new RangeError('the runner token must be at least 32 characters');
  const expected = digest(`Bearer ${token}`);
  return function runnerToken(req, res, next) {
    if (timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) return next();
    res.status(401).json({ code: 'UNAUTHORIZED', message: 'Runner token missing or wrong.' });
  };
}
