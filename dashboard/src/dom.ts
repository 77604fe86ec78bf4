/**
 * A tiny element builder. Children that are strings become text nodes, and attributes are set with
 * setAttribute, so user text (key names, sheet names and columns) is always text, never HTML:
 * nothing in the dashboard assigns innerHTML.
 */
type Child = Node | string | number | null | undefined | false;
/** An event handler; an async one is awaited by `h`, and a rejection it did not handle is logged. */
type Handler = (event: Event) => void | Promise<void>;
export type Props = Record<string, string | number | boolean | Handler | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      const handler = value;
      element.addEventListener(name.slice(2).toLowerCase(), (event) => {
        Promise.resolve(handler(event)).catch((error: unknown) => console.error(error));
      });
    } else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** A live region that screen readers announce; `say` replaces its text. */
export function status(): HTMLParagraphElement & { say(text: string, kind?: 'ok' | 'error'): void } {
  const p = h('p', { role: 'status', 'aria-live': 'polite', class: 'status' }) as HTMLParagraphElement & { say(text: string, kind?: 'ok' | 'error'): void };
  p.say = (text, kind = 'ok') => {
    p.textContent = text;
    p.className = `status ${kind}`;
  };
  return p;
}

export function table(headers: string[], rows: Child[][], caption?: string): HTMLTableElement {
  return h(
    'table',
    {},
    caption ? h('caption', {}, caption) : null,
    h('thead', {}, h('tr', {}, ...headers.map((name) => h('th', { scope: 'col' }, name)))),
    h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
  );
}

export function usd(micro: number): string {
  const value = micro / 1_000_000;
  return `$${value.toFixed(value !== 0 && Math.abs(value) < 0.01 ? 6 : 2)}`;
}

export function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC' : 'never';
}
