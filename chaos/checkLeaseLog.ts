/**
 * The invariants of a plain-lease chaos run (issue 15), as a pure function of its log: the workers'
 * `want`/`enter`/`exit`/`error` lines and the killer's `kill` lines.
 *
 * What a lease promises, and so what is checked: no two holders of one name while both leases are live. A
 * holder that is still in its critical section after its own lease expired (a process paused on a loaded
 * machine) is the case fencing tokens exist for: the next holder may enter then, with a higher token. Such
 * sections are counted (`overran`), not reported as overlaps; their tokens must still increase.
 */

export interface LogLine {
  readonly kind: 'want' | 'enter' | 'exit' | 'busy' | 'error' | 'error-detail' | 'kill' | 'outage';
  readonly pid: number;
  readonly name?: string;
  readonly token?: number;
  readonly start?: number;
  readonly end?: number;
  readonly expires?: number;
  readonly at?: number;
  /** An `outage` (the harness restarted or paused the backend): from when to when. */
  readonly from?: number;
  readonly to?: number;
  readonly documented?: boolean;
  readonly error?: string;
}

export interface LeaseVerdict {
  readonly sections: number;
  readonly kills: number;
  /** Critical sections whose holder was killed inside them (before its exit line). */
  readonly killedHolders: number;
  /** Sections still running after their own lease's expiry (the holder paused past its TTL). */
  readonly overran: number;
  /** The longest time a killed holder kept its name from the next holder, in ms. */
  readonly longestBlockMs: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly violations: readonly string[];
}

interface Section {
  pid: number;
  name: string;
  token: number;
  start: number;
  end: number;
  expires: number;
  killedAt?: number;
}

/** One worker's attempt at a name: from its `want` to its outcome (entered, busy, an error, or its kill). */
interface Wait {
  pid: number;
  from: number;
  to: number;
}

/**
 * `slackMs`: how long a worker may wait for a killed holder's name past that holder's expiry before someone enters:
 * retry sleep, the backend's work (a reconnect after a killed connection included).
 *
 * The bound is checked against waits, not against the first wish for the name: a violation is a worker that kept
 * waiting for the name (one attempt, uninterrupted) for more than the slack after the expiry while nobody entered.
 * Counting from a wish alone blamed the killed holder for time when nobody was trying: a waiter whose attempt ended
 * in a backend error (its connection killed by a fault) and who turned to another name, or who was killed itself.
 * Time inside an `outage` (the harness restarting or pausing the backend) does not count either: then nobody can
 * enter any name, and that is the backend's unavailability, which a killed holder's lease has no part in.
 */
export function checkLeaseLog(lines: readonly LogLine[], options: { slackMs: number; runEnd: number }): LeaseVerdict {
  const violations: string[] = [];
  const kills = new Map<number, number>();
  const outages: { from: number; to: number }[] = [];
  for (const l of lines) {
    if (l.kind === 'kill' && l.at !== undefined) kills.set(l.pid, l.at);
    if (l.kind === 'outage' && l.from !== undefined && l.to !== undefined) outages.push({ from: l.from, to: l.to });
  }
  /** The length of [from, to) outside every outage. */
  const served = (from: number, to: number) => {
    let t = Math.max(0, to - from);
    for (const o of outages) t -= Math.max(0, Math.min(to, o.to) - Math.max(from, o.from));
    return t;
  };
  const open = new Map<string, Section>();
  const sections: Section[] = [];
  const errors: Record<string, number> = {};
  const waits = new Map<string, Wait[]>();
  const waiting = new Map<number, { name: string; wait: Wait }>(); // each worker's attempt in progress
  const endWait = (pid: number, at: number) => {
    const w = waiting.get(pid);
    if (w) {
      w.wait.to = at;
      waiting.delete(pid);
    }
  };
  for (const l of lines) {
    if (l.kind === 'kill' && l.at !== undefined) endWait(l.pid, l.at);
    if ((l.kind === 'busy' || l.kind === 'error') && l.at !== undefined) endWait(l.pid, l.at);
    if (l.kind === 'enter' && l.start !== undefined) endWait(l.pid, l.start);
    if (l.kind === 'want' && l.name !== undefined && l.at !== undefined) {
      endWait(l.pid, l.at);
      const wait: Wait = { pid: l.pid, from: l.at, to: kills.get(l.pid) ?? options.runEnd };
      const list = waits.get(l.name) ?? [];
      list.push(wait);
      waits.set(l.name, list);
      waiting.set(l.pid, { name: l.name, wait });
    }
    const key = `${l.pid}\0${l.name}\0${l.token}`;
    if (l.kind === 'enter') {
      const s: Section = {
        pid: l.pid,
        name: l.name as string,
        token: l.token as number,
        start: l.start as number,
        end: Number.POSITIVE_INFINITY,
        expires: l.expires as number,
      };
      const killedAt = kills.get(l.pid);
      if (killedAt !== undefined) {
        s.killedAt = killedAt;
        s.end = killedAt;
      } else s.end = options.runEnd;
      open.set(key, s);
      sections.push(s);
    } else if (l.kind === 'exit') {
      const s = open.get(key);
      if (s === undefined) violations.push(`an exit without its entry (pid ${l.pid}, token ${l.token})`);
      else {
        s.end = l.end as number;
        open.delete(key);
      }
    } else if (l.kind === 'error') {
      const what = `${l.documented ? '' : 'UNDOCUMENTED '}${l.error}`;
      errors[what] = (errors[what] ?? 0) + 1;
      if (!l.documented) violations.push(`an undocumented error: ${l.error}`);
    }
  }
  // Each name's waits by start, with the longest: a killed holder's check then reads only the waits that can
  // overlap the time after its expiry (a full scan per killed holder took hours on a 30-minute Redis log).
  const waitsByStart = new Map<string, { list: Wait[]; longest: number }>();
  for (const [name, list] of waits) {
    list.sort((a, b) => a.from - b.from);
    let longest = 0;
    for (const w of list) longest = Math.max(longest, w.to - w.from);
    waitsByStart.set(name, { list, longest });
  }
  let killedHolders = 0;
  let longestBlockMs = 0;
  let overran = 0;
  const byName = new Map<string, Section[]>();
  for (const s of sections) {
    const list = byName.get(s.name) ?? [];
    list.push(s);
    byName.set(s.name, list);
  }
  for (const [name, list] of byName) {
    list.sort((a, b) => a.start - b.start);
    let liveUntil = Number.NEGATIVE_INFINITY; // the latest instant any earlier holder still held a live lease
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      if (s.start < liveUntil)
        violations.push(
          `two critical sections of ${name} overlap while both leases are live (tokens ${list[i - 1].token} and ${s.token}, by ${(liveUntil - s.start).toFixed(3)} ms)`,
        );
      if (i > 0 && s.token <= list[i - 1].token)
        violations.push(`fencing tokens of ${name} do not increase in order of entry: ${list[i - 1].token} then ${s.token}`);
      if (s.end > s.expires) overran++;
      liveUntil = Math.max(liveUntil, Math.min(s.end, s.expires));
      // A holder killed inside its lease: once it expires, a worker waiting for the name enters within the slack.
      const killedAt = kills.get(s.pid);
      if (killedAt !== undefined && s.end === killedAt) killedHolders++;
      if (killedAt !== undefined && killedAt >= s.start && killedAt < s.expires) {
        const nextStart = i + 1 < list.length ? list[i + 1].start : options.runEnd;
        if (i + 1 < list.length) longestBlockMs = Math.max(longestBlockMs, nextStart - killedAt);
        // The longest a single attempt waited for the name after the expiry, until it or the next holder got in.
        // Only a wait that ends after the expiry and starts before the next entry counts, so only waits that start
        // after (expiry - the longest wait) and before the next entry are read.
        let longestWait = 0;
        const byStart = waitsByStart.get(name);
        if (byStart !== undefined) {
          const { list: sorted, longest } = byStart;
          for (let j = firstFrom(sorted, s.expires - longest); j < sorted.length && sorted[j].from < nextStart; j++) {
            const w = sorted[j];
            if (w.pid !== s.pid) longestWait = Math.max(longestWait, served(Math.max(w.from, s.expires), Math.min(w.to, nextStart)));
          }
        }
        if (longestWait > options.slackMs) {
          violations.push(
            `a killed holder of ${name} (token ${s.token}) blocked it ${(nextStart - s.expires).toFixed(0)} ms past its expiry (a worker waited ${longestWait.toFixed(0)} ms of it)`,
          );
        }
      }
    }
  }
  return { sections: sections.length, kills: kills.size, killedHolders, overran, longestBlockMs, errors, violations };
}

/** The index of the first wait (sorted by `from`) that starts at or after `at`. */
function firstFrom(sorted: readonly Wait[], at: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid].from < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
