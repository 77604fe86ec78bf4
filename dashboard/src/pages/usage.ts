/**
 * Usage and credit: balance (grant plus top-off, each including the unspent credit of an open lease:
 * the API's one balance, the same figure as `X-Credits-Remaining` and admin `account show`) with the next reset, tier, today's daily caps, the
 * month's spend per day per source (an SVG chart drawn here, no library), the ledger, and upgrade
 * and top-off requests through the payment adapter.
 */
import type { LedgerAnswer, PaymentsAnswer } from '@uda/api/session/schemas';
import type { UsageAnswer as Usage } from '@uda/api/session/usage-schema';
import { call, messageOf } from '../api.ts';
import { h, replace, status, table, usd, when } from '../dom.ts';

const SVG = 'http://www.w3.org/2000/svg';
const COLOURS = ['#2563eb', '#db2777', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#dc2626', '#4b5563', '#65a30d', '#9333ea'];

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Stacked bars: one per day of the month, one colour per source. */
function spendChart(spend: Usage['spend_by_day'], now = new Date()): Element {
  const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
  const sources = [...new Set(spend.map((s) => s.source))].sort();
  const byDay = new Map<number, Map<string, number>>();
  for (const s of spend) {
    const day = Number(s.day.slice(8, 10));
    const m = byDay.get(day) ?? new Map<string, number>();
    m.set(s.source, (m.get(s.source) ?? 0) + Math.max(0, s.cost_micro));
    byDay.set(day, m);
  }
  const max = Math.max(1, ...[...byDay.values()].map((m) => [...m.values()].reduce((a, b) => a + b, 0)));
  const width = 620;
  const height = 180;
  const barWidth = (width - 40) / days;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 20}`, role: 'img', 'aria-labelledby': 'chart-title', class: 'chart' });
  chart.appendChild(svg('title', { id: 'chart-title' }, `Spend per day per source this month; highest day ${usd(max)}`));
  chart.appendChild(svg('text', { x: 0, y: 12, class: 'axis' }, usd(max)));
  for (let day = 1; day <= days; day++) {
    let y = height;
    for (const [i, source] of sources.entries()) {
      const value = byDay.get(day)?.get(source) ?? 0;
      if (!value) continue;
      const barHeight = (value / max) * (height - 20);
      y -= barHeight;
      const rect = svg('rect', { x: 40 + (day - 1) * barWidth, y, width: Math.max(1, barWidth - 2), height: barHeight, fill: COLOURS[i % COLOURS.length]! });
      rect.appendChild(svg('title', {}, `${source}, day ${day}: ${usd(value)}`));
      chart.appendChild(rect);
    }
    if (day === 1 || day % 5 === 0) chart.appendChild(svg('text', { x: 40 + (day - 1) * barWidth, y: height + 15, class: 'axis' }, String(day)));
  }
  const legend = h('ul', { class: 'legend' }, ...sources.map((source, i) => {
    const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = COLOURS[i % COLOURS.length]!;
    return h('li', {}, swatch, source);
  }));
  return h('figure', {}, chart, sources.length ? legend : h('figcaption', { class: 'muted' }, 'No spend yet this month.'));
}

type Feedback = ReturnType<typeof status>;

export async function usagePage(): Promise<HTMLElement> {
  const feedback = status();
  const answer = await call<Usage>('/usage');
  if (!answer.ok) throw new Error(messageOf(answer));
  const u = answer.body;
  const ledger = ledgerView(feedback);
  const payments = paymentsView(feedback);
  await Promise.all([ledger.load(), payments.load()]);
  const cap = (c: { used: number; limit: number }) => `${c.used.toLocaleString('en')} of ${c.limit.toLocaleString('en')}`;
  return h(
    'section',
    { 'aria-labelledby': 'usage-title' },
    h('h1', { id: 'usage-title' }, 'Usage and credit'),
    h(
      'dl',
      { class: 'cards' },
      h('div', {}, h('dt', {}, 'Balance'), h('dd', {}, usd(u.balance_micro)), h('dd', { class: 'muted' }, `grant ${usd(u.grant_micro)} + top-off ${usd(u.topoff_micro)}`)),
      h('div', {}, h('dt', {}, 'Tier'), h('dd', {}, u.tier), h('dd', { class: 'muted' }, `grant resets ${when(u.next_reset)}`)),
      h('div', {}, h('dt', {}, 'Exports and SQL today'), h('dd', {}, cap(u.today.export_sql))),
      h('div', {}, h('dt', {}, 'Sheet requests today'), h('dd', {}, cap(u.today.sheets))),
    ),
    h('h2', {}, 'Spend this month'),
    spendChart(u.spend_by_day),
    h('h2', {}, 'Ledger'),
    ledger.area,
    h('h2', {}, 'Upgrade or top off'),
    h('p', {}, u.payments),
    ...payments.forms,
    feedback,
    payments.area,
  );
}

/** The ledger, a page at a time, newest first. */
function ledgerView(feedback: Feedback) {
  const area = h('div');
  let page = 0;
  const load = async (): Promise<void> => {
    const res = await call<LedgerAnswer>(`/ledger?page=${page}`);
    if (!res.ok) return feedback.say(messageOf(res), 'error');
    const rows = res.body.entries.map((e) => [
      when(e.created_at),
      e.kind,
      usd(e.amount_micro),
      e.breakdown.map((b) => `${b.source}: ${b.rows} rows, ${usd(b.costMicro)}`).join('; ') || '—',
    ]);
    replace(
      area,
      rows.length ? table(['When', 'Kind', 'Amount', 'Sources'], rows, 'Ledger, newest first') : h('p', { class: 'muted' }, 'No charges yet.'),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', disabled: page === 0, onclick: () => ((page -= 1), void load()) }, 'Newer'),
        h('button', { type: 'button', disabled: !res.body.has_more, onclick: () => ((page += 1), void load()) }, 'Older'),
      ),
    );
  };
  return { area, load };
}

/** The upgrade and top-off requests: the two forms, and the list of requests made. */
function paymentsView(feedback: Feedback) {
  const area = h('div');
  const load = async () => {
    const res = await call<PaymentsAnswer>('/payments');
    if (!res.ok) return;
    replace(
      area,
      res.body.requests.length
        ? table(['Requested', 'What', 'Status'], res.body.requests.map((r) => [when(r.created_at), r.kind === 'upgrade' ? `Upgrade to ${r.tier}` : `Top-off ${usd(r.amount_micro ?? 0)}`, r.status]), 'Your requests')
        : null,
    );
  };
  const tier = h('select', { id: 'tier' }, ...['developer', 'pro'].map((t) => h('option', { value: t }, t)));
  const amount = h('input', { id: 'topoff', inputmode: 'decimal', value: '10', pattern: '\\d{1,5}(\\.\\d{1,2})?', required: true });
  const ask = (json: () => Record<string, string>) => async (event: Event) => {
    event.preventDefault();
    const res = await call('/payments', { json: json() });
    if (!res.ok) return feedback.say(messageOf(res), 'error');
    feedback.say('Request recorded. An operator approves it; the change applies at once when they do.');
    await load();
  };
  const forms = [
    h('form', { class: 'inline', onsubmit: ask(() => ({ kind: 'upgrade', tier: tier.value })) }, h('label', { for: 'tier' }, 'Tier'), tier, h('button', { type: 'submit' }, 'Request upgrade')),
    h('form', { class: 'inline', onsubmit: ask(() => ({ kind: 'topoff', amount_usd: amount.value })) }, h('label', { for: 'topoff' }, 'Top-off amount (USD)'), amount, h('button', { type: 'submit' }, 'Request top-off')),
  ];
  return { area, load, forms };
}
