/** The emails the dashboard sends, in plain text: each is one link and what it does. */
import type { Request } from 'express';
import { EMAIL_TOKEN_TTL_S } from '../session/auth/email-tokens.ts';
import type { MailMessage } from './mailer.ts';

const hours = (seconds: number) => (seconds === 3600 ? '1 hour' : `${seconds / 3600} hours`);

/**
 * The links' origin: PUBLIC_URL, else the address this API listens on (the embedded default). Never
 * the request's Host header, which a caller could set to send someone a link to another site.
 */
export function publicOrigin(publicUrl: string | undefined, req: Request): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`;
}

/** The token rides in the fragment: browsers never send it to a server, so it is in no access log or Referer. */
export const verifyLink = (origin: string, token: string) => `${origin}/dashboard/#/verify/${token}`;
export const resetLink = (origin: string, token: string) => `${origin}/dashboard/#/reset/${token}`;

export function verificationEmail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Verify your email for the Unified Data API',
    link,
    text: [
      'Welcome to the Unified Data API.',
      '',
      'Open this link to verify your email. SQL, exports and sheet uploads work once you have:',
      link,
      '',
      `The link works once, for ${hours(EMAIL_TOKEN_TTL_S.verify)}. If you did not sign up, ignore this email.`,
    ].join('\n'),
  };
}

export function resetEmail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Reset your Unified Data API password',
    link,
    text: [
      'Someone asked to reset the password of your Unified Data API account.',
      '',
      'Open this link to choose a new password. Every signed-in session ends when you do:',
      link,
      '',
      `The link works once, for ${hours(EMAIL_TOKEN_TTL_S.reset)}. If it was not you, ignore this email: your password stays as it is.`,
    ].join('\n'),
  };
}
