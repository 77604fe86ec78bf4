/** What main.ts hands every page (its own module: the pages import it, and main.ts imports the pages). */

export interface SessionInfo {
  email: string;
  tier: string;
  csrf_token: string;
}

export interface PageContext {
  session: SessionInfo;
  /** Set right after sign-up: the first page shows the quick start. */
  welcome: boolean;
}
