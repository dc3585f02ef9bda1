import type { IdRange, IdSpan, LockRecord } from './record';

/**
 * Identifier arithmetic (docs/protocol.md#identifiers): what a grant's ranges leased and nobody
 * minted, how it returns to the pool when the grant ends, and how the pool hands identifiers out
 * again, lowest first. No identifier is ever handed out twice.
 */

/** The identifiers of `ranges` that were never minted. */
function unmintedSpans(ranges: readonly IdRange[]): IdSpan[] {
  return ranges.filter(r => r.next <= r.end).map(r => ({ start: r.next, end: r.end }));
}

/**
 * A grant ends (release, clear, or takeover of its silent holder): its ranges go, and the
 * identifiers they leased that nobody minted go back to the pool. Minting is a write to the page,
 * so an identifier past a range's `next` was never handed out; one below it never comes back.
 */
export function endRanges(record: LockRecord): { ranges: IdRange[]; pool: IdSpan[]; reclaimed: number } {
  const returned = unmintedSpans(record.ranges);
  const reclaimed = unusedIdentifiers(record);
  return { ranges: [], pool: reclaimed > 0 ? mergeSpans([...record.pool, ...returned]) : [...record.pool], reclaimed };
}

/** How many identifiers the record's ranges leased that nobody minted: what ending the grant returns to the pool. */
export function unusedIdentifiers(record: LockRecord): number {
  return unmintedSpans(record.ranges).reduce((sum, r) => sum + r.end - r.start + 1, 0);
}

/** The audit detail of identifiers returned to the pool: `reclaimed 3 unused identifiers`. */
export function reclaimedText(reclaimed: number): string {
  return `reclaimed ${reclaimed} unused identifier${reclaimed === 1 ? '' : 's'}`;
}

/** Sorted, disjoint, adjacent spans joined. */
export function mergeSpans(spans: readonly IdSpan[]): IdSpan[] {
  const out: IdSpan[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start <= last.end + 1) out[out.length - 1] = { start: last.start, end: Math.max(last.end, s.end) };
    else out.push({ ...s });
  }
  return out;
}

/** Up to `count` identifiers from the pool, lowest first. */
export function takeFromPool(pool: readonly IdSpan[], count: number): { taken: IdSpan[]; pool: IdSpan[] } {
  const taken: IdSpan[] = [];
  const rest: IdSpan[] = [];
  let left = count;
  for (const span of pool) {
    if (left === 0) {
      rest.push(span);
      continue;
    }
    const size = span.end - span.start + 1;
    const take = Math.min(size, left);
    taken.push({ start: span.start, end: span.start + take - 1 });
    if (take < size) rest.push({ start: span.start + take, end: span.end });
    left -= take;
  }
  return { taken, pool: rest };
}

export function spansText(spans: readonly IdSpan[]): string {
  return spans.map(r => (r.start === r.end ? String(r.start) : `${r.start}-${r.end}`)).join(', ');
}
