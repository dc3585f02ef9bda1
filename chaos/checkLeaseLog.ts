/**
 * The invariants of a plain-lease chaos run (issue 15), as a pure function of its log: the workers'
 * `enter`/`exit`/`error` lines and the killer's `kill` lines.
 */

export interface LogLine {
  readonly kind: 'enter' | 'exit' | 'busy' | 'error' | 'error-detail' | 'kill';
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
  /** The longest time a killed holder kept its name from the next holder, in ms. */
  readonly longestBlockMs: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly violations: readonly string[];
}

interface Section { pid: number; name: string; token: number; start: number; end: number; expires: number; killedAt?: number }

/** `slackMs`: how much later than the killed holder's expiry the next holder may enter (retry sleep, start-up). */
export function checkLeaseLog(lines: readonly LogLine[], options: { slackMs: number; runEnd: number }): LeaseVerdict {
  const violations: string[] = [];
  const kills = new Map<number, number>();
  for (const l of lines) if (l.kind === 'kill' && l.at !== undefined) kills.set(l.pid, l.at);
  const open = new Map<string, Section>();
  const sections: Section[] = [];
  const errors: Record<string, number> = {};
  for (const l of lines) {
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
  const byName = new Map<string, Section[]>();
  for (const s of sections) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);
  for (const [name, list] of byName) {
    list.sort((a, b) => a.start - b.start);
    let latestEnd = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      if (s.start < latestEnd) violations.push(`two critical sections of ${name} overlap (tokens ${list[i - 1].token} and ${s.token}, by ${(latestEnd - s.start).toFixed(3)} ms)`);
      if (i > 0 && s.token <= list[i - 1].token) violations.push(`fencing tokens of ${name} do not increase in order of entry: ${list[i - 1].token} then ${s.token}`);
      latestEnd = Math.max(latestEnd, s.end);
      // A holder killed before it released: the next holder may wait for the lease's expiry, plus slack.
      const killedAt = kills.get(s.pid);
      if (killedAt !== undefined && s.end === killedAt) killedHolders++;
      if (killedAt !== undefined && killedAt >= s.start && killedAt < s.expires && i + 1 < list.length) {
        const next = list[i + 1];
        longestBlockMs = Math.max(longestBlockMs, next.start - killedAt);
        if (next.start > s.expires + options.slackMs) {
          violations.push(`a killed holder of ${name} (token ${s.token}) blocked it ${(next.start - s.expires).toFixed(0)} ms past its expiry`);
        }
      }
    }
  }
  return { sections: sections.length, kills: kills.size, killedHolders, longestBlockMs, errors, violations };
}
