/**
 * The dashboard: sign-in, then four pages behind hash links (API keys, Usage, Sheets, SQL console)
 * and "verify your email"; the pages emailed links open (verify, reset) and "forgot password"
 * stand alone, signed in or not. Plain TypeScript and the DOM; every piece of user text goes in as
 * a text node.
 */
import './style.css';
import { call, messageOf, setCsrfToken } from './api.ts';
import { h, replace, status } from './dom.ts';
import { forgotPage, resetPage, verifyLinkPage, verifyPage } from './pages/email.ts';
import { keysPage } from './pages/keys.ts';
import { sheetsPage } from './pages/sheets.ts';
import { sqlPage } from './pages/sql.ts';
import { usagePage } from './pages/usage.ts';
import type { PageContext, SessionInfo } from './page-context.ts';

const PAGES: Record<string, { title: string; render: (ctx: PageContext) => Promise<HTMLElement>; inNav?: false }> = {
  keys: { title: 'API keys', render: keysPage },
  usage: { title: 'Usage', render: usagePage },
  sheets: { title: 'Sheets', render: sheetsPage },
  sql: { title: 'SQL console', render: sqlPage },
  verify: { title: 'Verify your email', render: verifyPage, inNav: false },
};

/** The pages that need no session: an emailed link's, and "forgot password". */
async function standalonePage(hash: string): Promise<HTMLElement | undefined> {
  const link = /^#\/(verify|reset)\/([A-Za-z0-9_-]+)$/.exec(hash);
  if (link?.[1] === 'verify') return verifyLinkPage(link[2] as string);
  if (link?.[1] === 'reset') return resetPage(link[2] as string);
  return hash === '#/forgot' ? forgotPage() : undefined;
}

const app = document.getElementById('app') as HTMLElement;
let welcome = false;

async function start(): Promise<void> {
  const alone = await standalonePage(location.hash);
  if (alone) return replace(app, alone);
  const answer = await call<SessionInfo>('/session');
  if (!answer.ok) return showSignIn();
  setCsrfToken(answer.body.csrf_token);
  await showPage(answer.body);
}

function showSignIn(): void {
  const feedback = status();
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, minlength: 10 });
  const submit = (path: '/signup' | '/signin') => async (event: Event) => {
    event.preventDefault();
    if (!email.reportValidity() || !password.reportValidity()) return;
    feedback.say(path === '/signup' ? 'Creating your account…' : 'Signing in…');
    const answer = await call(path, { json: { email: email.value, password: password.value } });
    if (!answer.ok) return feedback.say(messageOf(answer), 'error');
    welcome = path === '/signup';
    // Changing the hash renders the page through the hashchange listener; render here only when it is already the keys page.
    if (location.hash !== '#/keys') location.hash = '#/keys';
    else await start();
  };
  document.title = 'Sign in · Unified Data API';
  replace(
    app,
    h(
      'main',
      { class: 'signin' },
      h('h1', {}, 'Unified Data API'),
      h('p', {}, 'Sign in to manage your API key, credit, sheets and SQL. New here? Sign up: a Free account with $5.00 of credit every month, no card needed.'),
      h(
        'form',
        { onsubmit: submit('/signin') },
        h('label', { for: 'email' }, 'Email'),
        email,
        h('label', { for: 'password' }, 'Password'),
        password,
        h('p', { class: 'hint' }, 'At least 10 characters.'),
        h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in'), h('button', { type: 'button', onclick: submit('/signup') }, 'Sign up')),
        feedback,
        h('p', {}, h('a', { href: '#/forgot' }, 'Forgot password?')),
      ),
    ),
  );
  email.focus();
}

async function showPage(session: SessionInfo): Promise<void> {
  const name = location.hash.replace(/^#\//, '') || 'keys';
  const page = PAGES[name] ?? PAGES.keys!;
  const content = h('main', { id: 'content', tabindex: '-1' }, h('p', { class: 'muted' }, 'Loading…'));
  const signOut = async () => {
    await call('/signout', { method: 'POST' });
    setCsrfToken('');
    location.hash = '';
    showSignIn();
  };
  document.title = `${page.title} · Unified Data API`;
  replace(
    app,
    h(
      'header',
      {},
      h('strong', { class: 'brand' }, 'Unified Data API'),
      h(
        'nav',
        { 'aria-label': 'Dashboard' },
        ...Object.entries(PAGES)
          .filter(([, p]) => p.inNav !== false)
          .map(([key, p]) => h('a', { href: `#/${key}`, 'aria-current': key === name ? 'page' : undefined }, p.title)),
      ),
      h('span', { class: 'who' }, session.email, ' · ', session.tier),
      h('button', { type: 'button', onclick: signOut }, 'Sign out'),
    ),
    content,
  );
  try {
    replace(content, await page.render({ session, welcome }));
  } catch (error) {
    replace(content, h('p', { role: 'alert' }, error instanceof Error ? error.message : 'The page could not be loaded.'));
  }
  welcome = false;
}

window.addEventListener('hashchange', () => void start());
void start();
