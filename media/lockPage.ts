// The lock page's script (runs in the webview; bundled to dist/media/lockPage.js). It renders the
// view the extension posts and sends back typed requests; it keeps the countdown ticking locally.
import { formatDuration, formatTime, localiseTimes } from '../src/core/format';
import { escapeControls } from '../src/core/safeText';
import type { FromWebview, LockPageView, ToWebview } from '../src/extension/lockPageProtocol';
import { fittingSpan, renderTimeline, type TimelineSpan } from './timeline';

declare function acquireVsCodeApi(): { postMessage(message: FromWebview): void; setState(state: unknown): void; getState(): unknown };

const vscode = acquireVsCodeApi();
const app = document.getElementById('app') as HTMLElement;
let view: LockPageView | undefined = vscode.getState() as LockPageView | undefined;
/** The timeline's span once the user chose one (else the one that fits the activity). */
let span: TimelineSpan | undefined;
let offset = 0; // page clock minus extension clock

/** The one human time format: local time with the zone (src/core/format.ts). */
function time(ms: number): string {
  return formatTime(ms);
}
/** Every text of the page goes through here: controls an older client stored (a right-to-left override) show as escapes. */
function el(tag: string, text?: string, cls?: string): HTMLElement {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = escapeControls(text);
  if (cls) e.className = cls;
  return e;
}
function button(label: string, type: FromWebview['type'], primary = false): HTMLButtonElement {
  const b = el('button', label, primary ? 'primary' : 'secondary') as HTMLButtonElement;
  b.addEventListener('click', () => vscode.postMessage({ type } as FromWebview));
  return b;
}
function section(title: string, body: HTMLElement): HTMLElement {
  const s = el('section');
  s.append(el('h2', title), body);
  return s;
}
function list(items: string[], empty: string): HTMLElement {
  if (items.length === 0) return el('p', empty, 'muted');
  const ol = el('ol');
  for (const item of items) ol.append(el('li', item));
  return ol;
}

/** Every container of the window with its state; choosing one makes it the one the page and badge show. */
function containerList(v: LockPageView): HTMLElement {
  const ul = el('ul', undefined, 'containers');
  for (const c of v.containers) {
    const li = el('li', undefined, c.shown ? 'shown' : '');
    li.append(el('span', c.folder, 'folder'), el('span', ` — ${c.badgeText}`, `state state-${c.state}`));
    if (!c.shown) {
      const b = el('button', 'Show', 'secondary') as HTMLButtonElement;
      b.addEventListener('click', () => vscode.postMessage({ type: 'lock/select', key: c.key }));
      li.append(' ', b);
    }
    ul.append(li);
  }
  return ul;
}

function render(): void {
  if (!view) return;
  const v = view;
  const now = Date.now() - offset;
  app.replaceChildren();
  const header = el('header');
  header.append(el('h1', v.badgeText, `state state-${v.state}`));
  if (v.folder) header.append(el('p', `${v.folder}${v.identity ? ` · you are ${v.identity}` : ''}`, 'muted'));
  app.append(header);
  if (v.containers.length > 1) app.append(section('Containers in this window', containerList(v)));
  if (v.message) app.append(el('p', v.message, 'error'));
  if (v.caution) {
    app.append(
      el(
        'p',
        `Caution: grant #${v.caution.silentGrant} went silent; ${v.caution.by} cleared or took over at ${time(v.caution.since)}. Treat this copy with caution until the next holder pushes and releases.`,
        'warning',
      ),
    );
  }

  const holder = el('div', undefined, 'facts');
  if (v.holder) {
    const left = v.holder.expiresAt - now;
    holder.append(
      el('div', `Holder: ${v.holder.identity}`),
      el('div', `Grant: #${v.holder.grant}`),
      el('div', `Granted: ${time(v.holder.grantedAt)}`),
      el(
        'div',
        left > 0 ? `Expires in: ${formatDuration(left)}` : `Silent since: ${time(v.holder.expiresAt)}`,
        left > 0 ? 'countdown' : 'warning',
      ),
    );
  } else {
    holder.append(el('div', `Free · last grant #${v.grant}`));
  }
  if (v.turn) holder.append(el('div', `Turn: ${v.turn.identity} for ${formatDuration(v.turn.endsAt - now)}`));
  app.append(section('Lock', holder));

  const actions = el('div', undefined, 'actions');
  if (v.canAcquire) actions.append(button('Acquire', 'lock/acquire', true));
  if (v.state === 'held-by-me') actions.append(button('Release', 'lock/release', true));
  if (v.position === 0 && v.state !== 'held-by-me' && v.state !== 'not-initialised') actions.append(button('Petition', 'lock/petition'));
  if (v.position > 0) actions.append(button('Withdraw', 'lock/withdraw'));
  if (v.state === 'holder-silent' && v.isOperator) actions.append(button('Clear (operator)…', 'lock/clear'));
  actions.append(button('Refresh', 'lock/refresh'));
  app.append(actions);

  app.append(
    section(
      'Queue',
      list(
        v.queue.map(p => `${p.identity}${p.note ? ` — ${p.note}` : ''} (since ${time(p.at)})`),
        'Nobody is waiting.',
      ),
    ),
  );
  app.append(
    section(
      'Blocks',
      list(
        v.blocks.map(b => `${b.to}: ${b.text}`),
        'No blocks assigned.',
      ),
    ),
  );
  app.append(
    section(
      'Leased identifiers',
      list(
        v.ranges.map(r => `${r.start}–${r.end} to ${r.to} (next: ${r.next <= r.end ? r.next : 'used up'})`),
        'No ranges leased.',
      ),
    ),
  );
  if (v.timeline) {
    const shown = span ?? fittingSpan(v.timeline, now);
    app.append(
      section(
        shown === 'day' ? 'Last 24 hours' : 'Last 7 days',
        renderTimeline(v.timeline, now, shown, chosen => {
          span = chosen;
          render();
        }),
      ),
    );
  }
  const audit = el('table', undefined, 'audit');
  const head = el('tr');
  for (const title of ['Time', 'Grant', 'Who', 'Action', 'Detail']) {
    const th = el('th', title);
    th.setAttribute('scope', 'col');
    head.append(th);
  }
  const thead = el('thead');
  const body = el('tbody');
  thead.append(head);
  audit.append(thead, body);
  for (const line of [...v.audit].reverse()) {
    const tr = el('tr', undefined, line.outcome === 'refused' ? 'refused' : '');
    tr.append(
      el('td', time(line.at)),
      el('td', `#${line.grant}`),
      el('td', line.who),
      el(
        'td',
        `${line.action}${line.outcome === 'refused' ? ' (refused)' : ''}${line.count ? ` ×${line.count}` : ''}${line.since !== undefined ? ` since ${time(line.since)}` : ''}`,
      ),
      el('td', localiseTimes(line.detail ?? '')),
    );
    body.append(tr);
  }
  app.append(section('Audit trail', v.audit.length ? audit : el('p', 'No audit lines yet.', 'muted')));
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  if (event.data?.type !== 'lock/didChange') return;
  view = event.data.view;
  offset = Date.now() - view.now;
  vscode.setState(view);
  render();
});
setInterval(render, 1000);
render();
vscode.postMessage({ type: 'lock/ready' });
