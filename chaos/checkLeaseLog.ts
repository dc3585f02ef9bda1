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
  readonly kind: 'want' | 'enter' | 'exit' | 'busy' | 'error' | 'error-detail' | 'kill';
  readonly pid: number;
  readonly name?: string;
  readonly token?: number;
  readonly start?: number;
  readonly end?: number;
  readonly expires?: number;
  readonly at?: number;
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

interface Section { pid: number; name: string; token: number; start: number; end: number; expires: number; killedAt?: number }

/**
 * `slackMs`: how much later than the killed holder's expiry (or than the first wish for its name after that
 * expiry, when nobody was waiting) the next holder may enter: retry sleep, process start-up, the backend's work.
 */
export function checkLeaseLog(lines: readonly LogLine[], options: { slackMs: number; runEnd: number }): LeaseVerdict {
  const violations: string[] = [];
  const kills = new Map<number, number>();
  for (const l of lines) if (l.kind === 'kill' && l.at !== undefined) kills.set(l.pid, l.at);
  const open = new Map<string, Section>();
  const sections: Section[] = [];
  const errors: Record<string, number> = {};
  const wants = new Map<string, { pid: number; at: number }[]>();
  for (const l of lines) {
    if (l.kind === 'want' && l.name !== undefined && l.at !== undefined) {
      const list = wants.get(l.name) ?? [];
      list.push({ pid: l.pid, at: l.at });
      wants.set(l.name, list);
    }
    const key = `${l.pid}\0${l.name}\0${l.token}`;
    if (l.kind === 'enter') {
      const s: Section = { pid: l.pid, name: l.name as string, token: l.token as number, start: l.start as number, end: Number.POSITIVE_INFINITY, expires: l.expires as number };
      const killedAt = kills.get(l.pid);
      if (killedAt !== undefined) { s.killedAt = killedAt; s.end = killedAt; }
      else s.end = options.runEnd;
      open.set(key, s);
      sections.push(s);
    } else if (l.kind === 'exit') {
      const s = open.get(key);
      if (s === undefined) violations.push(`an exit without its entry (pid ${l.pid}, token ${l.token})`);
      else { s.end = l.end as number; open.delete(key); }
    } else if (l.kind === 'error') {
      const what = `${l.documented ? '' : 'UNDOCUMENTED '}${l.error}`;
      errors[what] = (errors[what] ?? 0) + 1;
      if (!l.documented) violations.push(`an undocumented error: ${l.error}`);
    }
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
      if (s.start < liveUntil) violations.push(`two critical sections of ${name} overlap while both leases are live (tokens ${list[i - 1].token} and ${s.token}, by ${(liveUntil - s.start).toFixed(3)} ms)`);
      if (i > 0 && s.token <= list[i - 1].token) violations.push(`fencing tokens of ${name} do not increase in order of entry: ${list[i - 1].token} then ${s.token}`);
      if (s.end > s.expires) overran++;
      liveUntil = Math.max(liveUntil, Math.min(s.end, s.expires));
      // A holder killed inside its lease: once it expires, a worker waiting for the name enters within the slack.
      const killedAt = kills.get(s.pid);
      if (killedAt !== undefined && s.end === killedAt) killedHolders++;
      if (killedAt !== undefined && killedAt >= s.start && killedAt < s.expires && i + 1 < list.length) {
        const next = list[i + 1];
        longestBlockMs = Math.max(longestBlockMs, next.start - killedAt);
        // Waiting starts at the expiry, or later if nobody (still alive) wanted the name by then.
        const waiter = (wants.get(name) ?? []).find(w => w.pid !== s.pid && w.at >= s.start && w.at <= next.start && !((kills.get(w.pid) ?? Infinity) < next.start));
        const waitFrom = Math.max(s.expires, waiter?.at ?? next.start);
        if (next.start > waitFrom + options.slackMs) {
          violations.push(`a killed holder of ${name} (token ${s.token}) blocked it ${(next.start - s.expires).toFixed(0)} ms past its expiry`);
        }
      }
    }
  }
  return { sections: sections.length, kills: kills.size, killedHolders, overran, longestBlockMs, errors, violations };
}
