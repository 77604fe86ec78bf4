/**
 * Outgoing email (DECISIONS §5 "Email"): one interface, two adapters. `SmtpMailer` sends through
 * a real SMTP server (SMTP_URL); `OutboxMailer`, the embedded default, writes each message as an
 * .eml file under DATA_DIR/outbox and logs its path and link, so sign-up works end to end without
 * a mail server. Both build the message with nodemailer, so an .eml is what SMTP would carry.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '@uda/shared/logger';

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /** The one link the message is about (verification or reset): the outbox logs it. */
  readonly link: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

export class SmtpMailer implements Mailer {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(smtpUrl: string, from: string) {
    this.#transport = nodemailer.createTransport(smtpUrl);
    this.#from = from;
  }

  async send({ to, subject, text }: MailMessage): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, to, subject, text });
  }

  async close(): Promise<void> {
    this.#transport.close();
  }
}

export class OutboxMailer implements Mailer {
  readonly #dir: string;
  readonly #from: string;
  readonly #logger: Logger;
  readonly #build = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  #n = 0;

  constructor(dataDir: string, from: string, logger: Logger) {
    this.#dir = join(dataDir, 'outbox');
    this.#from = from;
    this.#logger = logger;
  }

  async send({ to, subject, text, link }: MailMessage): Promise<void> {
    const built = await this.#build.sendMail({ from: this.#from, to, subject, text });
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const path = join(this.#dir, `${new Date().toISOString().replaceAll(':', '-')}-${++this.#n}.eml`);
    await writeFile(path, built.message as Buffer, { mode: 0o600 });
    // The embedded default has no mail server: the log is how its user finds the link.
    this.#logger.info({ path, to, subject, link }, 'email written to the outbox (SMTP_URL is unset)');
  }

  async close(): Promise<void> {}
}

/**
 * Sends in the background, after the current request has answered, so a request never waits on
 * the mail server. `later` also runs the work that decides the message there (a password reset
 * looks up the email only after answering, so its answer takes the same time for any email). A
 * failure is logged without the link, whose token is a credential; `close` waits for what is still
 * on its way.
 */
export class MailQueue {
  readonly #mailer: Mailer;
  readonly #logger: Logger;
  readonly #pending = new Set<Promise<void>>();

  constructor(mailer: Mailer, logger: Logger) {
    this.#mailer = mailer;
    this.#logger = logger;
  }

  post(message: MailMessage): void {
    this.later(async () => message);
  }

  /** Runs `compose` on the next turn of the event loop (after the answer is written) and sends what it returns, if anything. */
  later(compose: () => Promise<MailMessage | undefined>): void {
    const sending = new Promise<void>((resolve) => setImmediate(resolve))
      .then(compose)
      .then((message) => message && this.#mailer.send(message))
      .catch((error: unknown) => this.#logger.error({ err: error }, 'email could not be sent'))
      .finally(() => this.#pending.delete(sending));
    this.#pending.add(sending);
  }

  /** Resolves once every email posted so far is sent or has failed (shutdown, tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.#pending.size) await Promise.all(this.#pending);
  }

  async close(): Promise<void> {
    await this.settled();
    await this.#mailer.close();
  }
}

export function createMailer(config: { SMTP_URL?: string | undefined; MAIL_FROM: string; DATA_DIR: string }, logger: Logger): Mailer {
  return config.SMTP_URL ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM) : new OutboxMailer(config.DATA_DIR, config.MAIL_FROM, logger);
}
