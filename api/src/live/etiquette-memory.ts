/** In-process etiquette: the same slot arithmetic as the Redis script, for one process. */
import { waitFor } from './etiquette.ts';
import type { Etiquette, EtiquetteRule, EtiquetteRules, Reservation } from './etiquette.ts';
import type { LiveSource } from './types.ts';

export interface SlotState {
  nextSlot: number;
  backoffUntil: number;
}

/** Mirrors the Lua script in etiquette-redis.ts; keep the two in step. */
export function reserve(state: SlotState, now: number, rule: EtiquetteRule): Reservation {
  const slot = Math.max(now, state.nextSlot, state.backoffUntil);
  const waitMs = slot - now;
  if (waitMs > rule.maxWaitMs) return { refused: true, backoffMs: Math.max(0, state.backoffUntil - now) };
  state.nextSlot = slot + rule.intervalMs + rule.marginMs;
  return { waitMs };
}

export class MemoryEtiquette implements Etiquette {
  readonly #rules: EtiquetteRules;
  readonly #now: () => number;
  readonly #state = new Map<LiveSource, SlotState>();

  constructor(options: { rules: EtiquetteRules; now?: () => number }) {
    this.#rules = options.rules;
    this.#now = options.now ?? Date.now;
  }

  #slots(source: LiveSource): SlotState {
    let state = this.#state.get(source);
    if (!state) this.#state.set(source, (state = { nextSlot: 0, backoffUntil: 0 }));
    return state;
  }

  async acquire(source: LiveSource): Promise<void> {
    const state = this.#slots(source);
    const rule = this.#rules[source];
    await waitFor(source, reserve(state, this.#now(), rule), rule, async () => Math.max(0, state.backoffUntil - this.#now()));
  }

  async backoff(source: LiveSource, seconds: number): Promise<void> {
    const state = this.#slots(source);
    state.backoffUntil = Math.max(state.backoffUntil, this.#now() + seconds * 1000);
  }
}
