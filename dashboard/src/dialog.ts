/**
 * Modal dialogs on the native <dialog>: showModal() traps focus inside and Escape closes it; focus
 * returns to the control that opened it.
 */
import { h } from './dom.ts';

export interface ConfirmOptions {
  title: string;
  body: string;
  confirm: string;
  /** Ask for the password in the dialog (Reveal after a few minutes). */
  password?: boolean;
}

/** Resolves with the password (or '') on confirm, undefined on cancel. */
export function confirmDialog(options: ConfirmOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null;
    const password = options.password ? h('input', { id: 'dialog-password', type: 'password', autocomplete: 'current-password', required: true }) : null;
    const titleId = `dialog-title-${Date.now()}`;
    const form = h(
      'form',
      { method: 'dialog' },
      h('h2', { id: titleId }, options.title),
      h('p', {}, options.body),
      password ? h('label', { for: 'dialog-password' }, 'Password') : null,
      password,
      h('div', { class: 'actions' }, h('button', { type: 'submit', value: 'confirm', class: 'primary' }, options.confirm), h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel')),
    );
    const dialog = h('dialog', { 'aria-labelledby': titleId }, form);
    document.body.appendChild(dialog);
    dialog.addEventListener('close', () => {
      const confirmed = dialog.returnValue === 'confirm';
      dialog.remove();
      opener?.focus();
      resolve(confirmed ? (password?.value ?? '') : undefined);
    });
    dialog.showModal();
    (password ?? form.querySelector('button'))?.focus();
  });
}
