import { DAY } from './clock';
import { MAX_HOLD_MS, type AuditLine, type LockRecord } from './lockRecord';

/** The lock page's timeline covers this much time back from now. */
export const TIMELINE_SPAN_MS = 7 * DAY;

/** How a grant ended: released after a push, ran out (taken over or still silent), cleared by an operator, or still held. */
export type GrantEnding = 'released' | 'expired' | 'cleared' | 'holding' | 'silent';

export interface GrantBar {
  readonly grant: number;
  readonly who: string;
  /** Acquire time, or the timeline's start when the acquire is older (or no longer in the audit). */
  readonly from: number;
  /** Release, clear or takeover time; `now` while held or silent. */
  readonly to: number;
  readonly ending: GrantEnding;
  /** The part of the bar when the holder was silent (lease past expiry, not yet cleared or taken over). */
  readonly silentFrom?: number;
  /** Whether the bar started before the timeline (or before the oldest audit line kept). */
  readonly clipped: boolean;
}

export interface QueueWait {
  readonly who: string;
  readonly from: number;
  readonly to: number;
  /** How the wait ended: the waiter acquired, withdrew, or still waits. */
  readonly ending: 'acquired' | 'withdrew' | 'waiting';
}

export interface Timeline {
  readonly from: number;
  readonly to: number;
  readonly bars: readonly GrantBar[];
  readonly waits: readonly QueueWait[];
}

export interface TimelineInput {
  /** The audit, oldest first (the record's, or the git driver's longer history). */
  readonly audit: readonly AuditLine[];
  /** The record's holder now (its expiry says whether it is silent). */
  readonly holder: LockRecord['holder'];
  /** The container's lease length: a grant without heartbeats expired this long after its last one. */
  readonly leaseTtlMs: number;
  readonly now: number;
  readonly spanMs?: number;
}

/**
 * Who held the lock when, and who waited how long, over the last seven days, from the audit alone. A grant
 * is a bar from its acquire to its release, clear or takeover; a grant that ran out shows its silent part
 * from the expiry its last acquire or heartbeat gave it (capped at 24 h from the grant). Pure.
 */
export function buildTimeline(input: TimelineInput): Timeline {
  const { audit, holder, leaseTtlMs, now } = input;
  const from = now - (input.spanMs ?? TIMELINE_SPAN_MS);
  const lines = audit.filter(l => l.outcome === 'done');
  const oldest = lines.reduce((min, l) => Math.min(min, l.at), now);

  type Open = { grant: number; who: string; from: number; clipped: boolean; lastAlive: number };
  const bars: GrantBar[] = [];
  let open: Open | undefined;
  const expiryOf = (o: Open) => Math.min(o.lastAlive + leaseTtlMs, o.from + MAX_HOLD_MS);
  const close = (to: number, ending: GrantEnding, silentFrom?: number) => {
    if (!open) return;
    bars.push({
      grant: open.grant,
      who: open.who,
      from: open.from,
      to,
      ending,
      clipped: open.clipped,
      ...(silentFrom !== undefined && silentFrom < to ? { silentFrom } : {}),
    });
    open = undefined;
  };
  // Lines about a grant whose acquire is no longer in the audit: the bar starts at the oldest line kept.
  const ensureOpen = (line: AuditLine) => {
    if (open?.grant === line.grant) return;
    if (open) close(line.at, 'expired', expiryOf(open));
    open = { grant: line.grant, who: line.who, from: oldest, clipped: true, lastAlive: line.at };
  };

  const waiting = new Map<string, number>();
  const waits: QueueWait[] = [];
  for (const line of lines) {
    switch (line.action) {
      case 'acquire':
        // A new grant while another was open: the old one ran out and was taken over.
        if (open) close(line.at, 'expired', expiryOf(open));
        open = { grant: line.grant, who: line.who, from: line.at, clipped: false, lastAlive: line.at };
        endWait(line.who, line.at, 'acquired');
        break;
      case 'heartbeat':
        ensureOpen(line);
        open!.lastAlive = line.at;
        break;
      case 'release':
        ensureOpen(line);
        close(line.at, 'released');
        break;
      case 'clear':
        ensureOpen(line);
        close(line.at, 'cleared', expiryOf(open!));
        break;
      case 'petition':
        waiting.set(line.who, line.at);
        break;
      case 'withdraw':
        endWait(line.who, line.at, 'withdrew');
        break;
      default:
        break;
    }
  }
  if (open) {
    // The record says how the open grant stands now.
    if (holder !== null && holder.grant === open.grant) {
      close(now, holder.expiresAt > now ? 'holding' : 'silent', holder.expiresAt > now ? undefined : holder.expiresAt);
    } else {
      close(Math.min(expiryOf(open), now), 'expired');
    }
  }
  for (const [who, since] of waiting) waits.push({ who, from: since, to: now, ending: 'waiting' });

  function endWait(who: string, at: number, ending: QueueWait['ending']): void {
    const since = waiting.get(who);
    if (since === undefined) return;
    waiting.delete(who);
    waits.push({ who, from: since, to: at, ending });
  }

  const clip = <T extends { from: number; to: number }>(items: T[]) =>
    items
      .filter(i => i.to >= from && i.from <= now)
      .map(i => (i.from < from ? { ...i, from, ...('clipped' in i ? { clipped: true } : {}) } : i));
  return {
    from,
    to: now,
    bars: clip(bars).map(b => (b.silentFrom !== undefined && b.silentFrom < from ? { ...b, silentFrom: from } : b)),
    waits: clip(waits).sort((a, b) => a.from - b.from),
  };
}

/** One sentence per bar and wait: the timeline's text alternative and its tooltips. */
export function describeBar(bar: GrantBar, clock: (ms: number) => string): string {
  const how: Record<GrantEnding, string> = {
    released: `released ${clock(bar.to)}`,
    expired: `ran out${bar.silentFrom !== undefined ? ` ${clock(bar.silentFrom)}, taken over ${clock(bar.to)}` : ` ${clock(bar.to)}`}`,
    cleared: `silent from ${clock(bar.silentFrom ?? bar.to)}, cleared by an operator ${clock(bar.to)}`,
    holding: 'still holding',
    silent: `silent since ${clock(bar.silentFrom ?? bar.to)}`,
  };
  return `Grant #${bar.grant}: ${bar.who}, ${bar.clipped ? 'held before ' : 'from '}${clock(bar.from)}, ${how[bar.ending]}.`;
}

export function describeWait(wait: QueueWait, clock: (ms: number) => string, duration: (ms: number) => string): string {
  const how = { acquired: 'then acquired', withdrew: 'then withdrew', waiting: 'still waiting' }[wait.ending];
  return `${wait.who} waited ${duration(wait.to - wait.from)} from ${clock(wait.from)}, ${how}.`;
}

const SUMMARY = /^([a-z-]+) (refused )?by (.+?) \(grant #(\d+)\)(?:: ([\s\S]*))?$/;

/**
 * The git driver's history (one entry per transition, newest first) as audit lines, oldest first. Each
 * entry carries its record's own audit line (what the server guard checked); only entries compacted by
 * an older version have just a summary, which is read back. Entries with neither are skipped.
 */
export function auditFromHistory(
  entries: readonly { readonly time: number; readonly summary: string; readonly line?: AuditLine }[],
): AuditLine[] {
  const lines: AuditLine[] = [];
  for (const entry of [...entries].reverse()) {
    if (entry.line !== undefined) {
      lines.push(entry.line);
      continue;
    }
    const m = SUMMARY.exec(entry.summary.trim());
    if (!m) continue;
    lines.push({
      at: entry.time,
      action: m[1] as AuditLine['action'],
      outcome: m[2] ? 'refused' : 'done',
      who: m[3]!,
      grant: Number(m[4]),
      ...(m[5] ? { detail: m[5] } : {}),
    });
  }
  return lines;
}

/** The record's audit, or the store's history where that reaches further back. */
export function longerAudit(record: readonly AuditLine[], history: readonly AuditLine[] | undefined): readonly AuditLine[] {
  if (!history || history.length === 0) return record;
  const oldest = (lines: readonly AuditLine[]) => lines[0]?.at ?? Infinity;
  return oldest(history) < oldest(record) ? history : record;
}
