import { MINUTE } from './clock';
import { formatClock } from './format';
import { MAX_HOLD_MS } from './lockRecord';

/** Warn this long before the holder's lease ends while heartbeats fail. */
export const LEASE_WARNING_MS = 15 * MINUTE;
/** Warn this long before the 24-hour cap from the grant. */
export const CAP_WARNING_MS = 30 * MINUTE;

/** What the holder's window knows about its own hold. */
export interface HoldFacts {
  readonly grant: number;
  readonly grantedAt: number;
  /** The lease's expiry as last confirmed by the store. */
  readonly expiresAt: number;
  /** Whether the store is unreachable now (heartbeats fail and are retried). */
  readonly heartbeatFailing: boolean;
}

export type HoldWarningKind = 'lease-ending' | 'cap';

export interface HoldWarning {
  readonly kind: HoldWarningKind;
  readonly grant: number;
  /** When the lock ends if nothing changes. */
  readonly endsAt: number;
  /** One warning per grant and kind: the caller remembers the keys it has shown. */
  readonly key: string;
}

export interface HoldWarningPlan {
  /** Warnings to show now (not shown before, per `shown`). */
  readonly due: readonly HoldWarning[];
  /** The next instant a warning could fall due with no other change; undefined when none can. */
  readonly nextAt: number | undefined;
}

/**
 * Which warnings the holder should see at `now`: 15 minutes before the lease ends while heartbeats are
 * failing (working heartbeats extend it, so no warning then), and 30 minutes before the 24-hour cap from
 * the grant (which no heartbeat passes). Each once per grant; none once the end has passed (the badge
 * and the lost-lease notice take over). Pure: the caller supplies the clock and what it has shown.
 */
export function planHoldWarnings(hold: HoldFacts | undefined, shown: ReadonlySet<string>, now: number): HoldWarningPlan {
  if (hold === undefined) return { due: [], nextAt: undefined };
  const capAt = hold.grantedAt + MAX_HOLD_MS;
  const candidates: { kind: HoldWarningKind; endsAt: number; lead: number; applies: boolean }[] = [
    { kind: 'lease-ending', endsAt: Math.min(hold.expiresAt, capAt), lead: LEASE_WARNING_MS, applies: hold.heartbeatFailing },
    { kind: 'cap', endsAt: capAt, lead: CAP_WARNING_MS, applies: true },
  ];
  const due: HoldWarning[] = [];
  let nextAt: number | undefined;
  for (const c of candidates) {
    const key = `${c.kind}#${hold.grant}`;
    if (!c.applies || shown.has(key) || now >= c.endsAt) continue;
    const warnAt = c.endsAt - c.lead;
    if (now >= warnAt) due.push({ kind: c.kind, grant: hold.grant, endsAt: c.endsAt, key });
    else nextAt = Math.min(nextAt ?? warnAt, warnAt);
  }
  return { due, nextAt };
}

/** The notification's words ("push and release, or your lock ends at 14:05 and the next person takes over"). */
export function holdWarningMessage(warning: HoldWarning, now: number, clock: (epochMs: number) => string = formatClock): string {
  const minutes = Math.max(1, Math.round((warning.endsAt - now) / MINUTE));
  const end = `your lock ends at ${clock(warning.endsAt)} (in ${minutes} min) and the next person takes over`;
  return warning.kind === 'cap'
    ? `Lockstep: grant #${warning.grant} reaches the 24-hour cap soon — push and release, or ${end}.`
    : `Lockstep: heartbeats are failing (the lock store is unreachable) — push and release, or ${end}.`;
}
