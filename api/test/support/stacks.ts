/**
 * Per-test-file stacks for jest (they register beforeAll/afterAll, so only test files import this):
 * a fresh API context plus the live fakes, or plus a runner on a real export.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { type TestContext, openTestContext } from '@uda/test-support/api-harness';
import { type LiveFakes, startLiveFakes } from './live-fakes.ts';
import { type StoredRunner, startStoredRunner } from './stored-runner.ts';

export interface LiveStack {
  readonly ctx: TestContext;
  readonly fakes: LiveFakes;
}

/** Per test file, at module level: a fresh API context and every live fake, closed after the file. */
export function useLiveStack(): LiveStack {
  const stack = {} as { ctx: TestContext; fakes: LiveFakes };
  beforeAll(async () => {
    stack.ctx = await openTestContext();
    stack.fakes = await startLiveFakes();
  });
  afterAll(async () => {
    await stack.ctx.close();
    await stack.fakes.close();
  });
  return stack;
}

export interface StoredStack {
  readonly ctx: TestContext;
  readonly runner: StoredRunner;
}

/** Per test file, at module level: a fresh API context and a runner on a real export, closed after the file. */
export function useStoredStack(): StoredStack {
  const stack = {} as { ctx: TestContext; runner: StoredRunner };
  beforeAll(async () => {
    stack.ctx = await openTestContext();
    stack.runner = await startStoredRunner();
  }, 60_000);
  afterAll(async () => {
    await stack.ctx.close();
    await stack.runner?.close();
  });
  return stack;
}
