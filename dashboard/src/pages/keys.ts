/**
 * API keys (SPEC: "lists, per key: name, key prefix, status, last used, created date" and "offers
 * Reveal, Copy, Revoke and Replace actions"). One active key per account: creating a key
 * deactivates the previous one, and the page says so before confirming.
 */
import type { KeyAnswer, KeyItem, KeysAnswer } from '@uda/api/session/schemas';
import { type Answer, call, messageOf } from '../api.ts';
import { confirmDialog } from '../dialog.ts';
import { h, replace, status, table, when } from '../dom.ts';
import type { PageContext } from '../page-context.ts';
import { verifyNotice } from './email.ts';
import { quickStart } from './quick-start.ts';

type Feedback = ReturnType<typeof status>;

/** What the page's parts share: where messages and the full key show, and the active key. */
interface KeysView {
  readonly feedback: Feedback;
  readonly keyArea: HTMLElement;
  readonly quickArea: HTMLElement;
  shownKey: string | undefined;
  active: KeyItem | undefined;
  refresh(): Promise<void>;
}

export async function keysPage(ctx: PageContext): Promise<HTMLElement> {
  const listArea = h('div');
  const view: KeysView = {
    feedback: status(), keyArea: h('div', { class: 'key-area' }), quickArea: h('div'), shownKey: undefined, active: undefined,
    refresh: async () => {
      const answer = await call<KeysAnswer>('/keys');
      if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
      const keys = answer.body.keys;
      view.active = keys.find((k) => k.status === 'active');
      replace(listArea, keyList(keys));
      for (const button of actions.querySelectorAll('button')) button.disabled = !view.active;
      if (!view.shownKey) replace(view.quickArea, quickStart(undefined));
    },
  };
  const actions = keyActions(view);
  await view.refresh();
  return h(
    'section',
    { 'aria-labelledby': 'keys-title' },
    h('h1', { id: 'keys-title' }, 'API keys'),
    ctx.welcome ? h('p', { class: 'welcome' }, 'Welcome! Your Free account is ready with its monthly credit. Create a key below, then try the quick start.') : null,
    ctx.session.email_verified ? null : verifyNotice(ctx.session),
    h('p', {}, 'Send your key as ', h('code', {}, 'Authorization: Bearer <key>'), '. One key is active at a time: creating a key deactivates the previous one.'),
    createKeyForm(view),
    view.feedback,
    view.keyArea,
    actions,
    listArea,
    view.quickArea,
  );
}

function showKey(view: KeysView, key: string, note: string): void {
  view.shownKey = key;
  replace(view.keyArea, h('p', {}, note), h('code', { class: 'full-key', 'aria-label': 'Full API key' }, key));
  replace(view.quickArea, quickStart(key));
}

function keyList(keys: readonly KeyItem[]): HTMLElement {
  if (keys.length === 0) return h('p', { class: 'muted' }, 'No keys yet. Create one to call the API with your account.');
  return table(
    ['Name', 'Key prefix', 'Status', 'Last used', 'Created'],
    keys.map((k) => [k.name, h('code', {}, `${k.prefix}…`), h('span', { class: `badge ${k.status}` }, k.legacy ? `legacy · ${k.status}` : k.status), when(k.last_used_at), when(k.created_at)]),
    'Your keys, newest first',
  );
}

/** The full active key, asking for the password when the session is a few minutes old. */
async function revealKey(feedback: Feedback): Promise<string | undefined> {
  let answer: Answer<KeyAnswer> = await call<KeyAnswer>('/keys/reveal', { json: {} });
  if (answer.body.code === 'REAUTH_REQUIRED') {
    const password = await confirmDialog({ title: 'Confirm it is you', body: 'You signed in a while ago. Enter your password to reveal the key.', confirm: 'Confirm', password: true });
    if (password === undefined) return undefined;
    answer = await call<KeyAnswer>('/keys/reveal', { json: { password } });
  }
  if (!answer.ok) {
    feedback.say(messageOf(answer), 'error');
    return undefined;
  }
  return answer.body.key;
}

function createKeyForm(view: KeysView): HTMLFormElement {
  const nameInput = h('input', { id: 'key-name', name: 'name', required: true, maxlength: 100, value: 'default' });
  const create = async (event: Event) => {
    event.preventDefault();
    if (!nameInput.reportValidity()) return;
    if (view.active) {
      const ok = await confirmDialog({
        title: 'Create a new key?',
        body: `Your active key "${view.active.name}" (${view.active.prefix}…) will be deactivated at once: calls with it will run as anonymous. Only one key is active at a time.`,
        confirm: 'Deactivate and create',
      });
      if (ok === undefined) return;
    }
    const answer = await call<KeyAnswer>('/keys', { json: { name: nameInput.value } });
    if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
    showKey(view, answer.body.key, 'Your new key. It is shown in full here once; you can Reveal it again later while it is active.');
    view.feedback.say('Key created.');
    await view.refresh();
  };
  return h('form', { class: 'inline', onsubmit: create }, h('label', { for: 'key-name' }, 'Key name'), nameInput, h('button', { type: 'submit', class: 'primary' }, 'Create key'));
}

/** Reveal, Copy, Replace and Revoke, on the active key. */
function keyActions(view: KeysView): HTMLElement {
  const { feedback } = view;
  const reveal = async () => {
    const key = await revealKey(feedback);
    if (!key) return;
    showKey(view, key, 'Your active key:');
    feedback.say('Key revealed.');
  };
  const copy = async () => {
    const key = view.shownKey ?? (await revealKey(feedback));
    if (!key) return;
    try {
      await navigator.clipboard.writeText(key);
      feedback.say('Copied the full key to the clipboard.');
    } catch {
      showKey(view, key, 'The browser did not allow copying; select the key below and copy it yourself:');
      feedback.say('Copy was blocked by the browser.', 'error');
    }
  };
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Active key actions' },
    h('button', { type: 'button', onclick: reveal }, 'Reveal'),
    h('button', { type: 'button', onclick: copy }, 'Copy'),
    h('button', { type: 'button', onclick: () => replaceKey(view) }, 'Replace'),
    h('button', { type: 'button', class: 'danger', onclick: () => revokeKey(view) }, 'Revoke'),
  );
}

async function replaceKey(view: KeysView): Promise<void> {
  const ok = await confirmDialog({
    title: 'Replace the key?',
    body: `A new key named "${view.active?.name ?? ''}" replaces the active one. The old key stops working at once: calls with it run as anonymous.`,
    confirm: 'Replace key',
  });
  if (ok === undefined) return;
  const answer = await call<KeyAnswer>('/keys/replace', { method: 'POST' });
  if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
  showKey(view, answer.body.key, 'Your replacement key. The old key no longer works.');
  view.feedback.say('Key replaced. The old key no longer works.');
  await view.refresh();
}

async function revokeKey(view: KeysView): Promise<void> {
  const ok = await confirmDialog({
    title: 'Revoke the key?',
    body: 'The key ends at once. Lookups with it run as anonymous (the free anonymous allowance), and SQL, exports and sheets answer 401. This cannot be undone; create a new key afterwards.',
    confirm: 'Revoke key',
  });
  if (ok === undefined) return;
  const answer = await call('/keys/revoke', { method: 'POST' });
  if (!answer.ok) return view.feedback.say(messageOf(answer), 'error');
  view.shownKey = undefined;
  replace(view.keyArea);
  view.feedback.say('Key revoked. Calls with it now run as anonymous; SQL, exports and sheets answer 401.');
  await view.refresh();
}
