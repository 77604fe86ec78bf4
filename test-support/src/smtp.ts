/**
 * A real SMTP server for tests (the `smtp-server` package) on 127.0.0.1:<free port>: the API sends
 * to it with nodemailer as it would to any mail server, and a test reads what arrived (parsed by
 * `mailparser`) and follows the links as a person would.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly text: string;
  /** The first http(s) link in the text. */
  readonly link: string | undefined;
}

export interface TestSmtp {
  /** For the API's SMTP_URL. */
  readonly url: string;
  readonly received: readonly ReceivedMail[];
  /** The next message to `to` that has not been taken yet; waits for it (up to `timeoutMs`). */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const text = mail.text ?? '';
          const to = [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address ?? '')).join(', ');
          received.push({ to, from: mail.from?.text ?? '', subject: mail.subject ?? '', text, link: /https?:\/\/\S+/.exec(text)?.[0] });
          for (const wake of waiters.splice(0)) wake();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  const find = (to: string) => received.find((m) => !taken.has(m) && m.to.toLowerCase() === to.toLowerCase());
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async next(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = find(to);
        if (mail) {
          taken.add(mail);
          return mail;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no email to ${to} within ${timeoutMs} ms (received: ${received.map((m) => m.to).join(', ') || 'none'})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
