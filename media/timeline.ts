// The lock page's timeline (runs in the webview): grants as bars per person over the last 24 hours or seven days, coloured
// by how they ended, silent parts hatched, queue waits as thin bars beneath; a tooltip per bar (<title>) and
// the same sentences as a text alternative. Colours come from the theme through CSS classes (lockPage.css).
import { escapeControls } from '../src/core/safeText';
import type { TimelineView } from '../src/extension/lockPageProtocol';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 1000;
const LABEL = 190;
const AXIS = 22;
const LANE = 30;

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  title?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (title !== undefined) {
    const t = document.createElementNS(SVG, 'title');
    t.textContent = escapeControls(title);
    e.append(t);
  }
  return e;
}

/** The span the axis shows: the last 24 hours, or the last seven days. */
export type TimelineSpan = 'day' | 'week';
const DAY_MS = 24 * 3600_000;

/** The span that fits the activity: the last 24 hours when every grant and wait is in them, else the week. */
export function fittingSpan(t: TimelineView, now: number): TimelineSpan {
  const items = [...t.bars, ...t.waits];
  return items.length > 0 && items.every(i => i.from >= now - DAY_MS) ? 'day' : 'week';
}

/** The timeline over `span`, with a switch between the two spans that calls `choose`. */
export function renderTimeline(
  t: TimelineView,
  now: number,
  span: TimelineSpan = fittingSpan(t, now),
  choose: (span: TimelineSpan) => void = () => undefined,
): HTMLElement {
  const wrap = document.createElement('div');
  wrap.className = 'timeline';
  const switcher = document.createElement('div');
  switcher.className = 'span-switch';
  switcher.setAttribute('role', 'group');
  switcher.setAttribute('aria-label', 'Time span');
  for (const [value, label] of [
    ['day', '24 h'],
    ['week', '7 days'],
  ] as const) {
    const b = document.createElement('button');
    b.textContent = label;
    b.dataset.span = value;
    b.setAttribute('aria-pressed', String(span === value));
    b.addEventListener('click', () => choose(value));
    switcher.append(b);
  }
  wrap.append(switcher);
  const from = span === 'day' ? Math.max(t.from, now - DAY_MS) : t.from;
  const within = <T extends { from: number; to: number }>(items: readonly T[]) => items.filter(i => i.to >= from && i.from <= t.to);
  const bars = within(t.bars);
  const waits = within(t.waits);
  const lanes = [...new Set([...bars.map(b => b.who), ...waits.map(w => w.who)])];
  const spanWords = span === 'day' ? 'the last 24 hours' : 'the last seven days';
  if (lanes.length === 0) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.textContent = `Nobody held the lock in ${spanWords}.`;
    wrap.append(p);
    return wrap;
  }
  const height = AXIS + lanes.length * LANE + 4;
  const width = Math.max(1, t.to - from);
  const x = (ms: number) => LABEL + ((Math.min(Math.max(ms, from), t.to) - from) / width) * (WIDTH - LABEL - 6);
  const root = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${height}`,
    width: '100%',
    role: 'img',
    class: 'timeline-chart',
    'aria-label': `Who held the lock over ${spanWords}: ${bars.length} grants, ${waits.length} waits. The list below says the same in words.`,
  });

  // Week: a line at each local midnight, labelled with the weekday and date. Day: every three hours, labelled with the hour.
  const first = new Date(from);
  if (span === 'week') first.setHours(24, 0, 0, 0);
  else first.setHours(Math.floor(first.getHours() / 3) * 3 + 3, 0, 0, 0);
  const step = span === 'week' ? DAY_MS : 3 * 3600_000;
  for (let d = first.getTime(); d < t.to; d += step) {
    root.append(svg('line', { x1: x(d), x2: x(d), y1: AXIS - 4, y2: height, class: 'day' }));
    const label = svg('text', { x: x(d) + 3, y: 12, class: 'axis' });
    label.textContent =
      span === 'week'
        ? new Date(d).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' })
        : new Date(d).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
    root.append(label);
  }
  root.append(svg('line', { x1: x(now), x2: x(now), y1: AXIS - 4, y2: height, class: 'now' }, 'now'));

  lanes.forEach((who, i) => {
    const y = AXIS + i * LANE;
    const name = svg('text', { x: 0, y: y + 15, class: 'lane' }, who);
    name.textContent = escapeControls(who.length > 26 ? `${who.slice(0, 25)}…` : who);
    root.append(name);
    for (const b of bars.filter(b => b.who === who)) {
      const x1 = x(b.from);
      const x2 = Math.max(x(b.to), x1 + 2);
      root.append(
        svg(
          'rect',
          { x: x1, y: y + 3, width: x2 - x1, height: 16, rx: 2, class: `bar bar-${b.ending}`, tabindex: 0, 'aria-label': b.text },
          b.text,
        ),
      );
      if (b.silentFrom !== undefined) {
        const s1 = x(b.silentFrom);
        root.append(svg('rect', { x: s1, y: y + 3, width: Math.max(x2 - s1, 1), height: 16, class: 'silent' }, `Silent: ${b.text}`));
      }
    }
    for (const w of waits.filter(w => w.who === who)) {
      const x1 = x(w.from);
      root.append(
        svg(
          'rect',
          {
            x: x1,
            y: y + 22,
            width: Math.max(x(w.to) - x1, 2),
            height: 4,
            class: `wait wait-${w.ending}`,
            tabindex: 0,
            'aria-label': w.text,
          },
          w.text,
        ),
      );
    }
  });
  wrap.append(root);

  const legend = document.createElement('p');
  legend.className = 'legend';
  for (const [cls, label] of [
    ['released', 'released'],
    ['expired', 'ran out'],
    ['cleared', 'cleared'],
    ['holding', 'holding'],
    ['silent-key', 'silent'],
    ['wait-key', 'waiting in the queue'],
  ]) {
    const item = document.createElement('span');
    const swatch = document.createElement('span');
    swatch.className = `swatch swatch-${cls}`;
    item.append(swatch, ` ${label}`);
    legend.append(item);
  }
  wrap.append(legend);

  const details = document.createElement('details');
  const summary = document.createElement('summary');
  summary.textContent = `The timeline in words (${t.source === 'history' ? 'from the git history' : "from the lock page's audit"})`;
  const list = document.createElement('ul');
  for (const text of [...bars.map(b => b.text), ...waits.map(w => w.text)]) {
    const li = document.createElement('li');
    li.textContent = escapeControls(text);
    list.append(li);
  }
  details.append(summary, list);
  wrap.append(details);
  return wrap;
}
