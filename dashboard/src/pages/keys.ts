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

export async function keysPage(ctx: PageContext): Promise<HTMLElement> {
  const feedback = status();
  const listArea = h('div');
  const keyArea = h('div', { class: 'key-area' });
  const quickArea = h('div');
  let shownKey: string | undefined;
  let active: KeyItem | undefined;

  const showKey = (key: string, note: string) => {
    shownKey = key;
    replace(keyArea, h('p', {}, note), h('code', { class: 'full-key', 'aria-label': 'Full API key' }, key));
    replace(quickArea, quickStart(key));
  };

  const refresh = async () => {
    const answer = await call<KeysAnswer>('/keys');
    if (!answer.ok) return feedback.say(messageOf(answer), 'error');
    const keys = answer.body.keys;
    active = keys.find((k) => k.status === 'active');
    replace(
      listArea,
      keys.length
        ? table(
            ['Name', 'Key prefix', 'Status', 'Last used', 'Created'],
            keys.map((k) => [k.name, h('code', {}, `${k.prefix}…`), h('span', { class: `badge ${k.status}` }, k.legacy ? `legacy · ${k.status}` : k.status), when(k.last_used_at), when(k.created_at)]),
            'Your keys, newest first',
          )
        : h('p', { class: 'muted' }, 'No keys yet. Create one to call the API with your account.'),
    );
    for (const button of actions.querySelectorAll('button')) button.disabled = !active;
    if (!shownKey) replace(quickArea, quickStart(undefined));
  };

  /** The full active key, asking for the password when the session is a few minutes old. */
  const reveal = async (): Promise<string | undefined> => {
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
  };

  const nameInput = h('input', { id: 'key-name', name: 'name', required: true, maxlength: 100, value: 'default' });
  const create = async (event: Event) => {
    event.preventDefault();
    if (!nameInput.reportValidity()) return;
    if (active) {
      const ok = await confirmDialog({
        title: 'Create a new key?',
        body: `Your active key "${active.name}" (${active.prefix}…) will be deactivated at once: calls with it will run as anonymous. Only one key is active at a time.`,
        confirm: 'Deactivate and create',
      });
      if (ok === undefined) return;
    }
    const answer = await call<KeyAnswer>('/keys', { json: { name: nameInput.value } });
    if (!answer.ok) return feedback.say(messageOf(answer), 'error');
    showKey(answer.body.key, 'Your new key. It is shown in full here once; you can Reveal it again later while it is active.');
    feedback.say('Key created.');
    await refresh();
  };

  const actions = h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Active key actions' },
    h('button', {
      type: 'button',
      onclick: async () => {
        const key = await reveal();
        if (key) {
          showKey(key, 'Your active key:');
          feedback.say('Key revealed.');
        }
      },
    }, 'Reveal'),
    h('button', {
      type: 'button',
      onclick: async () => {
        const key = shownKey ?? (await reveal());
        if (!key) return;
        try {
          await navigator.clipboard.writeText(key);
          feedback.say('Copied the full key to the clipboard.');
        } catch {
          showKey(key, 'The browser did not allow copying; select the key below and copy it yourself:');
          feedback.say('Copy was blocked by the browser.', 'error');
        }
      },
    }, 'Copy'),
    h('button', {
      type: 'button',
      onclick: async () => {
        const ok = await confirmDialog({
          title: 'Replace the key?',
          body: `A new key named "${active?.name ?? ''}" replaces the active one. The old key stops working at once: calls with it run as anonymous.`,
          confirm: 'Replace key',
        });
        if (ok === undefined) return;
        const answer = await call<KeyAnswer>('/keys/replace', { method: 'POST' });
        if (!answer.ok) return feedback.say(messageOf(answer), 'error');
        showKey(answer.body.key, 'Your replacement key. The old key no longer works.');
        feedback.say('Key replaced. The old key no longer works.');
        await refresh();
      },
    }, 'Replace'),
    h('button', {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        const ok = await confirmDialog({
          title: 'Revoke the key?',
          body: 'The key ends at once. Lookups with it run as anonymous (the free anonymous allowance), and SQL, exports and sheets answer 401. This cannot be undone; create a new key afterwards.',
          confirm: 'Revoke key',
        });
        if (ok === undefined) return;
        const answer = await call('/keys/revoke', { method: 'POST' });
        if (!answer.ok) return feedback.say(messageOf(answer), 'error');
        shownKey = undefined;
        replace(keyArea);
        feedback.say('Key revoked. Calls with it now run as anonymous; SQL, exports and sheets answer 401.');
        await refresh();
      },
    }, 'Revoke'),
  );

  await refresh();
  return h(
    'section',
    { 'aria-labelledby': 'keys-title' },
    h('h1', { id: 'keys-title' }, 'API keys'),
    ctx.welcome ? h('p', { class: 'welcome' }, 'Welcome! Your Free account is ready with its monthly credit. Create a key below, then try the quick start.') : null,
    ctx.session.email_verified ? null : verifyNotice(ctx.session),
    h('p', {}, 'Send your key as ', h('code', {}, 'Authorization: Bearer <key>'), '. One key is active at a time: creating a key deactivates the previous one.'),
    h('form', { class: 'inline', onsubmit: create }, h('label', { for: 'key-name' }, 'Key name'), nameInput, h('button', { type: 'submit', class: 'primary' }, 'Create key')),
    feedback,
    keyArea,
    actions,
    listArea,
    quickArea,
  );
}
