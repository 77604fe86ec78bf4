import { createHash } from 'node:crypto';
import { Command, type Redis } from 'ioredis';

/**
 * A Lua script's call as the bytes Redis reads (RESP), for the counter call every request makes.
 * ioredis builds each command from its arguments: it copies them into a fresh array, turns every
 * number into a string and concatenates the protocol text, and its script helper wraps the
 * command's promise and its reject in closures of their own. Here everything that is the same for
 * every request (the script's SHA, each counter's points, window and refund flag) is encoded once;
 * a request splices in only its keys (the client's IP, the account and the UTC day).
 */

/** Bulk strings already in RESP (`$<bytes>\r\n<text>\r\n` each), and how many they are. */
export interface RespArgs {
  readonly bytes: Buffer;
  readonly count: number;
}

function bulk(value: string | number): string {
  const text = String(value);
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

/** Encodes `values` once, for a part of a call that never changes (a counter's ARGV). */
export function respArgs(values: readonly (string | number)[]): RespArgs {
  return { bytes: Buffer.from(values.map(bulk).join('')), count: values.length };
}

/**
 * A command whose bytes are ready: ioredis queues it and parses its reply as any other. Its replies
 * are text, as `redis.call`'s are: a bare `Command` answers bulk strings as Buffers, and a rider's
 * reply (the hold's lease id) goes on into a JSON batch for PostgreSQL.
 */
class PrebuiltCommand extends Command {
  readonly #bytes: Buffer;

  constructor(name: string, bytes: Buffer) {
    super(name, [], { replyEncoding: 'utf8' });
    this.#bytes = bytes;
  }

  override toWritable(): Buffer {
    return this.#bytes;
  }
}

export class ScriptCall {
  readonly lua: string;
  readonly sha: string;
  /** `EVALSHA <sha>` in RESP, the start of every call. */
  readonly #evalsha: string;

  constructor(lua: string) {
    this.lua = lua;
    this.sha = createHash('sha1').update(lua).digest('hex');
    this.#evalsha = bulk('EVALSHA') + bulk(this.sha);
  }

  /**
   * `EVALSHA sha <keys.length> keys… args…`. A Redis that doesn't know the script yet (its first
   * call, or after a restart or a flush) answers NOSCRIPT: the same call goes again as EVAL with
   * the script's text, which also loads it for the calls after.
   */
  async call(client: Redis, keys: readonly string[], args: readonly RespArgs[], tail: readonly (string | number)[] = []): Promise<unknown> {
    try {
      return await client.sendCommand(new PrebuiltCommand('evalsha', this.#bytes(this.#evalsha, keys, args, tail)));
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      return client.sendCommand(new PrebuiltCommand('eval', this.#bytes(bulk('EVAL') + bulk(this.lua), keys, args, tail)));
    }
  }

  /**
   * `*<count>`, the command and its script, the number of keys, the keys, the prebuilt arguments,
   * then `tail`: arguments that change with every call (a rider's), written straight into the
   * command's bytes rather than encoded into a Buffer of their own first.
   */
  #bytes(commandAndScript: string, keys: readonly string[], args: readonly RespArgs[], tail: readonly (string | number)[]): Buffer {
    let count = 3 + keys.length + tail.length;
    let argBytes = 0;
    for (const arg of args) {
      count += arg.count;
      argBytes += arg.bytes.length;
    }
    let text = `*${count}\r\n${commandAndScript}${bulk(keys.length)}`;
    for (const key of keys) text += bulk(key);
    let tailText = '';
    for (const value of tail) tailText += bulk(value);
    const textBytes = Buffer.byteLength(text);
    const out = Buffer.allocUnsafe(textBytes + argBytes + Buffer.byteLength(tailText));
    let at = out.write(text);
    for (const arg of args) at += arg.bytes.copy(out, at);
    if (tailText) out.write(tailText, at);
    return out;
  }
}
