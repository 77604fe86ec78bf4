/**
 * The email pages (DECISIONS §5 "Email"): "verify your email" with Resend, the page a verification
 * link opens, "forgot password" and the page a reset link opens. A link's token rides in the URL
 * fragment (`#/verify/<token>`, `#/reset/<token>`), so it never reaches a server log; the page
 * posts it to the session API. The link pages work signed in or not, in any browser.
 */
import type { EmailAnswer } from '@uda/api/session/schemas';
import { call, messageOf } from '../api.ts';
import { h, status } from '../dom.ts';
import type { SessionInfo } from '../page-context.ts';

/** What an account may do before its email is verified, in one sentence (the Keys page says it too). */
export const UNVERIFIED_RULE =
  'Until you open it, your key makes lookups and MCP searches at the Free allowance; SQL, exports and sheet uploads answer 403 "verify your email first".';

/** The "verify your email" box: where the link went, what works meanwhile, and Resend. */
export function verifyNotice(session: SessionInfo): HTMLElement {
  const feedback = status();
  const resend = async () => {
    feedback.say('Sending…');
    const answer = await call<EmailAnswer>('/email/resend', { method: 'POST' });
    const retry = answer.headers.get('retry-after');
    if (!answer.ok) return feedback.say(retry ? `${messageOf(answer)} (try again in ${Math.ceil(Number(retry) / 60)} min)` : messageOf(answer), 'error');
    feedback.say(answer.body.message);
  };
  return h(
    'section',
    { class: 'notice', 'aria-labelledby': 'verify-title' },
    h('h2', { id: 'verify-title' }, 'Verify your email'),
    h('p', {}, 'We sent a link to ', h('strong', {}, session.email), '. ', UNVERIFIED_RULE),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: resend }, 'Resend email')),
    feedback,
  );
}

/** The page behind "verify your email" (`#/verify`), for a signed-in account. */
export async function verifyPage({ session }: { session: SessionInfo }): Promise<HTMLElement> {
  if (session.email_verified) return h('section', {}, h('h1', {}, 'Email verified'), h('p', {}, `${session.email} is verified.`));
  return h('section', {}, h('h1', {}, 'Verify your email'), verifyNotice(session));
}

/** A standalone page (no header): the sign-in page's frame. */
function standalone(title: string, ...children: (Node | string)[]): HTMLElement {
  document.title = `${title} · Unified Data API`;
  return h('main', { class: 'signin' }, h('h1', {}, title), ...children);
}

const toDashboard = (text: string) => h('p', {}, h('a', { href: '#/keys' }, text));

/** `#/verify/<token>`: spends the link's token at once and says what happened. */
export async function verifyLinkPage(token: string): Promise<HTMLElement> {
  const feedback = status();
  const answer = await call<EmailAnswer>('/email/verify', { json: { token } });
  // A spent token is of no use: a reload shows the signed-in "verify your email" page instead.
  if (answer.ok) history.replaceState(null, '', '#/verify');
  feedback.say(answer.ok ? answer.body.message : messageOf(answer), answer.ok ? 'ok' : 'error');
  return standalone(answer.ok ? 'Email verified' : 'This link did not work', feedback, toDashboard('Go to your dashboard'));
}

function passwordInput(id: string, autocomplete: string): HTMLInputElement {
  return h('input', { id, name: id, type: 'password', autocomplete, required: true, minlength: 10 });
}

/** `#/forgot`: asks for a reset link; the answer is the same for every email. */
export function forgotPage(): HTMLElement {
  const feedback = status();
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true });
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!email.reportValidity()) return;
    feedback.say('Sending…');
    const answer = await call<EmailAnswer>('/password/forgot', { json: { email: email.value } });
    feedback.say(answer.ok ? answer.body.message : messageOf(answer), answer.ok ? 'ok' : 'error');
  };
  return standalone(
    'Forgot password',
    h('p', {}, 'Enter the email of your account. We send a link to choose a new password.'),
    h('form', { onsubmit: submit }, h('label', { for: 'email' }, 'Email'), email, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send reset link')), feedback),
    toDashboard('Back to sign in'),
  );
}

/** `#/reset/<token>`: a new password, twice; on success every session has ended, so sign in again. */
export function resetPage(token: string): HTMLElement {
  const feedback = status();
  const password = passwordInput('new-password', 'new-password');
  const again = passwordInput('new-password-again', 'new-password');
  const submit = async (event: Event) => {
    event.preventDefault();
    again.setCustomValidity(again.value === password.value ? '' : 'The two passwords differ.');
    if (!password.reportValidity() || !again.reportValidity()) return;
    feedback.say('Saving…');
    const answer = await call<EmailAnswer>('/password/reset', { json: { token, password: password.value } });
    feedback.say(answer.ok ? answer.body.message : messageOf(answer), answer.ok ? 'ok' : 'error');
  };
  return standalone(
    'Reset password',
    h(
      'form',
      { onsubmit: submit },
      h('label', { for: 'new-password' }, 'New password'),
      password,
      h('label', { for: 'new-password-again' }, 'New password again'),
      again,
      h('p', { class: 'hint' }, 'At least 10 characters. Every signed-in session ends when you save it.'),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Set new password')),
      feedback,
    ),
    toDashboard('Sign in'),
  );
}
