import { type AuditLine, type LockRecord, MAX_AUDIT_BYTES, MAX_AUDIT_LINES, MAX_REFUSAL_BYTES, MAX_REFUSAL_LINES } from './record';

/**
 * The audit trail (docs/protocol.md#the-audit-trail): appending a line, folding repeats, the two
 * sections' budgets, and the one-line summary the git driver writes into commit messages.
 */

const UTF8 = new TextEncoder();

/**
 * Appends the transition's (or refused attempt's) line: always the trail's last, which the server
 * guard reads. Folding keeps floods small: a heartbeat folds into its grant's heartbeat line when
 * that is the last transition (refused attempts in between do not break the run), and a refused
 * attempt folds into the same person's earlier refused line of the same action, wherever it is,
 * whatever its grant or detail (a presented grant varies at will): the folded line moves to the end
 * with a count, the first one's time (`since`) and the latest time, grant and detail.
 */
export function withAudit(record: LockRecord, line: AuditLine): LockRecord {
  const folds = (l: AuditLine) =>
    line.outcome === 'refused'
      ? l.outcome === 'refused' && l.who === line.who && l.action === line.action
      : line.action === 'heartbeat' && l.action === 'heartbeat' && l.outcome === 'done' && l.grant === line.grant;
  const at = line.outcome === 'refused' ? findLast(record.audit, folds) : lastTransition(record.audit, folds);
  if (at < 0) return { ...record, audit: boundAudit([...record.audit, line]) };
  const earlier = record.audit[at];
  const folded: AuditLine = {
    ...line,
    count: (earlier.count ?? 1) + 1,
    ...(line.outcome === 'refused' ? { since: earlier.since ?? earlier.at } : {}),
  };
  return { ...record, audit: boundAudit([...record.audit.slice(0, at), ...record.audit.slice(at + 1), folded]) };
}

/** The index of the last line that `match`es, or -1. */
function findLast(audit: readonly AuditLine[], match: (line: AuditLine) => boolean): number {
  for (let i = audit.length - 1; i >= 0; i--) if (match(audit[i])) return i;
  return -1;
}

/** The index of the last transition (refused attempts skipped) when it `match`es, else -1. */
function lastTransition(audit: readonly AuditLine[], match: (line: AuditLine) => boolean): number {
  const i = findLast(audit, l => l.outcome !== 'refused');
  return i >= 0 && match(audit[i]) ? i : -1;
}

/**
 * Seed 001: every clear by the operator carries its audit line. An operator's clear (a `clear` line
 * with outcome `done`) is never dropped from the page, however many other lines come after it.
 * Refused clear attempts are not clears: anyone can make them, so they are bounded like any other
 * line (and folded when one person repeats one).
 */
export function keptForever(line: AuditLine): boolean {
  return line.action === 'clear' && line.outcome === 'done';
}

/**
 * Two sections, each with its own budget. Refused attempts (outcome `refused`) keep the newest
 * {@link MAX_REFUSAL_LINES} within {@link MAX_REFUSAL_BYTES}. Transitions: the lines kept forever
 * ({@link keptForever}) all stay; the others keep the newest {@link MAX_AUDIT_LINES}, then the
 * oldest of them go until the transitions fit {@link MAX_AUDIT_BYTES}. Were the kept-forever lines
 * alone past the budget, the trail stays past it: no clear line is ever dropped to make room (the
 * docs say so). Neither section's lines count against the other's budget, so no number of refused
 * attempts pushes out a transition. The newest line always stays.
 */
export function boundAudit(audit: readonly AuditLine[]): AuditLine[] {
  const keep = audit.map(() => true);
  const refusal = (l: AuditLine) => l.outcome === 'refused';
  trimOldest(audit, keep, refusal, refusal, MAX_REFUSAL_LINES, MAX_REFUSAL_BYTES);
  trimOldest(
    audit,
    keep,
    l => !refusal(l) && !keptForever(l),
    l => !refusal(l),
    MAX_AUDIT_LINES,
    MAX_AUDIT_BYTES,
  );
  return audit.filter((_, i) => keep[i]);
}

/**
 * Drops the oldest `droppable` lines until at most `maxLines` of them remain and the lines `counted`
 * (the droppable ones and those of their section that never go) fit `maxBytes`. The newest line is
 * the transition's own (the server guard reads it): it always stays.
 */
function trimOldest(
  audit: readonly AuditLine[],
  keep: boolean[],
  droppable: (l: AuditLine) => boolean,
  counted: (l: AuditLine) => boolean,
  maxLines: number,
  maxBytes: number,
): void {
  let lines = 0;
  const countedLines: AuditLine[] = [];
  for (const l of audit) {
    if (droppable(l)) lines++;
    if (counted(l)) countedLines.push(l);
  }
  let bytes = linesBytes(countedLines);
  for (let i = 0; i < audit.length - 1 && (lines > maxLines || bytes > maxBytes); i++) {
    if (!droppable(audit[i])) continue;
    keep[i] = false;
    lines--;
    bytes -= lineBytes(audit[i]);
  }
}

/**
 * The sum of {@link lineBytes} over `lines`, from ONE JSON text of them all: `[a,b,…]` is each line's JSON
 * and a comma between two, so its UTF-8 length is that sum plus one. Records are parsed afresh at every read,
 * so the per-line cache below never hits for the lines carried over; measuring 500 of them one by one was
 * about a millisecond of every transition (issue 30, bench/pageScale.ts). Only the lines a trim drops are
 * measured one by one.
 */
export function linesBytes(lines: readonly AuditLine[]): number {
  return lines.length === 0 ? 0 : UTF8.encode(JSON.stringify(lines)).length - 1;
}

/**
 * A line's share of the budget: its JSON in UTF-8 and a separator. Lines are immutable and carried
 * from record to record, so each is measured once (a cache with no effect on any result).
 */
const measured = new WeakMap<AuditLine, number>();
export function lineBytes(line: AuditLine): number {
  let bytes = measured.get(line);
  if (bytes === undefined) {
    bytes = UTF8.encode(JSON.stringify(line)).length + 1;
    measured.set(line, bytes);
  }
  return bytes;
}

/** One line, for the git driver's commit messages and logs. Identities only, never tokens. */
export function summarise(line: Omit<AuditLine, 'outcome'>, outcome: 'done' | 'refused'): string {
  const detail = line.detail ? `: ${line.detail}` : '';
  return `${line.action} ${outcome === 'refused' ? 'refused ' : ''}by ${line.who} (grant #${line.grant})${detail}`;
}
