/**
 * Lua scripts called by SHA: a call sends its keys and arguments, not the script's text (the
 * billing steps run on every charged request, and their text is most of a call's bytes).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { writeWithTurn } from '../limiter/redis.ts';

export interface Script {
  readonly lua: string;
  readonly sha: string;
}

export function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * EVALSHA, and EVAL once when Redis does not know the script yet (a restart, a flush). The call
 * leaves with the other commands of its event-loop turn (`writeWithTurn`).
 */
export async function runScript(redis: Redis, s: Script, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
  writeWithTurn(redis);
  try {
    return await redis.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!String(error).includes('NOSCRIPT')) throw error;
    return redis.eval(s.lua, keys.length, ...keys, ...args);
  }
}
