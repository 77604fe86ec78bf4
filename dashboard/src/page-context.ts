/** What main.ts hands every page (its own module: the pages import it, and main.ts imports the pages). */
import type { SessionAnswer } from '@uda/api/session/schemas';

/** The session answer's wire type, from the API's own schema. */
export type SessionInfo = Omit<SessionAnswer, 'status'>;

export interface PageContext {
  session: SessionInfo;
  /** Set right after sign-up: the first page shows the quick start. */
  welcome: boolean;
}
