import { summarise, type AuditLine } from '../../lockRecord';
import { AUDIT_FILE, WRITE_TRAILER } from './gitRefs';

/**
 * The commit of one write of a container record, as the git driver writes it and as the server
 * guard requires it: every part of it that a person reads in `git log` is derived from the record's
 * new audit line, so nothing in the commit can tell another story than the record the guard checked.
 *
 *   tree <the tree>
 *   parent <the revision it was computed from>      (none for a first record or a compaction)
 *   author <who> <<who>> <seconds of the line's time> +0000
 *   committer <the same>
 *   gpgsig <the writer's signature>                   (when the writer signs; required with allowedSigners)
 *
 *   <the line's summary, on one line>
 *
 *   Lockstep-Write: <16 random hex digits>
 *   Lockstep-Snapshot: <entries>                      (a compaction only)
 *
 * A compaction's author and date are those of the record's last line (the record is unchanged).
 * Readers of the history still take each entry from the commit's record.json, never from this text.
 */

/** Author and committer of a record commit: the line's actor, at the line's time (whole seconds, UTC). */
export interface CommitStamp {
  /** The actor's identity as git keeps it in a name and an email (see {@link gitIdent}). */
  readonly ident: string;
  readonly seconds: number;
}

/**
 * The audit line a stored value ends with, when the value is a container record (a plain value of
 * the driver, a lease or a test's object, has none).
 */
export function lastAuditLine(value: unknown): AuditLine | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const audit = (value as { audit?: unknown }).audit;
  if (!Array.isArray(audit) || audit.length === 0) return undefined;
  const line = audit[audit.length - 1] as Partial<AuditLine> | null;
  return typeof line === 'object' &&
    line !== null &&
    typeof line.who === 'string' &&
    line.who !== '' &&
    typeof line.at === 'number' &&
    Number.isFinite(line.at) &&
    line.at >= 0 &&
    typeof line.action === 'string' &&
    Number.isSafeInteger(line.grant) &&
    (line.outcome === 'done' || line.outcome === 'refused')
    ? (line as AuditLine)
    : undefined;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what commitSubject removes
const CONTROL_RUNS = /[\x00-\x1f\x7f]+/g;

/** Any summary as one commit subject: no newlines or control characters, bounded length. */
export function commitSubject(summary: string): string {
  const line = summary.replace(CONTROL_RUNS, ' ').trim().slice(0, 500);
  return line === '' ? 'lockstep: update' : line;
}

/** The subject of a transition's commit: its audit line's summary. */
export function transitionSubject(line: AuditLine): string {
  return commitSubject(summarise(line, line.outcome));
}

/** The subject of a compaction's snapshot commit. */
export function compactionSubject(entries: number): string {
  return `lockstep: history compacted (${entries} entries kept in ${AUDIT_FILE})`;
}

/**
 * An identity as it can stand in a commit's name and email unchanged: git drops `<`, `>` and
 * newlines and trims punctuation and spaces at the ends, so every character outside
 * `A-Z a-z 0-9 @ _ + - .` (and a `.` at either end) is written as `%XX` of its UTF-8 bytes.
 * `alice@example.com` stays `alice@example.com`.
 */
export function gitIdent(identity: string): string {
  const escaped = [...Buffer.from(identity, 'utf8')]
    .map(byte => {
      const c = String.fromCharCode(byte);
      return /[A-Za-z0-9@_+.-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
  return escaped.replace(/^\./, '%2E').replace(/\.$/, '%2E');
}

export function stampOf(line: AuditLine): CommitStamp {
  return { ident: gitIdent(line.who), seconds: Math.floor(line.at / 1000) };
}

/** The environment with which `git commit-tree` writes `stamp` as author and committer. */
export function stampEnv(stamp: CommitStamp): Record<string, string> {
  const date = `@${stamp.seconds} +0000`;
  return {
    GIT_AUTHOR_NAME: stamp.ident,
    GIT_AUTHOR_EMAIL: stamp.ident,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: stamp.ident,
    GIT_COMMITTER_EMAIL: stamp.ident,
    GIT_COMMITTER_DATE: date,
  };
}

/** A commit's signature header as git writes it: `gpgsig` (or `gpgsig-sha256`), its lines continued by a space. */
const SIGNATURE_HEADER = /^gpgsig(?:-sha256)? [^\n]*\n(?: [^\n]*\n)*/;

/**
 * Why a pushed record commit is not the commit lockstep writes for it (one sentence, naming no
 * value), or undefined when it is, byte for byte: its tree, the parents git reads, the stamp and
 * subject derived from the audit line, a write trailer and exactly the expected other trailers.
 */
export function checkRecordCommit(
  text: string,
  expected: {
    readonly parents: readonly string[];
    readonly stamp: CommitStamp;
    readonly subject: string;
    readonly trailers?: readonly string[];
  },
): string | undefined {
  const tree = /^tree ([0-9a-f]{40}|[0-9a-f]{64})\n/.exec(text)?.[1];
  if (tree === undefined) return 'its commit does not start with its tree.';
  const who = `${expected.stamp.ident} <${expected.stamp.ident}> ${expected.stamp.seconds} +0000`;
  const fixed = `tree ${tree}\n${expected.parents.map(p => `parent ${p}\n`).join('')}author ${who}\ncommitter ${who}\n`;
  // Then, when the writer signs (git's SSH or GPG signing), its signature: one header with continuation lines.
  const signature = text.startsWith(fixed) ? (SIGNATURE_HEADER.exec(text.slice(fixed.length))?.[0] ?? '') : '';
  const header = `${fixed}${signature}\n`;
  if (!text.startsWith(header)) {
    return "its commit's headers are not the ones lockstep writes: the parents as git reads them, then author and committer derived from the new audit line (its actor, at its time), then at most its signature.";
  }
  const message = text.slice(header.length);
  const trailers = (expected.trailers ?? []).map(t => `${t}\n`).join('');
  const start = `${expected.subject}\n\n${WRITE_TRAILER}: `;
  if (
    !message.startsWith(start) ||
    !/^[0-9a-f]{16}\n$/.test(message.slice(start.length, message.length - trailers.length)) ||
    !message.endsWith(trailers)
  ) {
    return "its commit message is not the one lockstep writes: the new audit line's summary and its own trailers, nothing else.";
  }
  return undefined;
}
