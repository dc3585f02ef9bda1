import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { CasResult } from '../store';
import { AUDIT_FILE, damaged, MAX_RECORD_BYTES, RECORD_FILE, SNAPSHOT_TRAILER, type CommitInfo, type GitRefs } from './gitRefs';
import { type AuditEntry, lineEntry, storedEntry } from './auditEntry';
import { ParsedHistory } from './parsedHistory';
import { compactionSubject, lastAuditLine, stampEnv, stampOf } from './recordCommit';
import type { GitRefCells } from './refCells';

/**
 * A container record's audit trail is its ref's history: one commit per write, each entry being the
 * new audit line of that commit's record.json — what the server guard checked — never the commit's
 * subject, author or date, which anyone can write (the guard requires them derived from the line,
 * but a reader does not rely on that). A stored value that is not a container record (no audit
 * line) has only its commit to go by. Histories stay bounded by compaction: `compact` replaces the whole
 * chain by ONE parentless snapshot commit whose tree holds the current `record.json` unchanged and
 * `audit.log` — the newest {@link AUDIT_LOG_KEEP} audit entries (all of them when fewer; revision,
 * time, author, line), oldest first, one JSON object per line — and pushes it with the same lease
 * check as any write (a concurrent writer makes it fail, nothing is lost). Reading history walks the
 * commits down to the snapshot and continues in its `audit.log`, so compaction is invisible to
 * `lockstep audit` (whose `--history` shows at most as many). The squashed commits become unreachable
 * on the remote and its own `git gc` reclaims them. The snapshot is a non-fast-forward update, as
 * every plain-lease write is; git's receive.denyNonFastForwards guards branches only, and a host or
 * hook that refuses it for refs/lockstep/ gets a LockBackendError saying so. Compaction runs by itself
 * once a write leaves {@link AUTO_COMPACT_AFTER} commits on the last snapshot (container.ts), and on
 * demand (`lockstep compact`).
 */

/**
 * The audit entries a snapshot's audit.log keeps: the newest 2,000 — as many as the lock page's timeline
 * shows, four times the 500 lines the other drivers' pages keep (`lockstep audit --history` shows at most
 * as many). An operator's clear lines are kept forever anyway, in record.json itself (audit.ts
 * keptForever). Bounded so that a fresh clone's first read, `status --remote` and a compaction's own
 * cost do not grow with the page's whole age: about 600 KB of JSON lines at most, which every fresh
 * clone fetches with the snapshot (issue 30: at 10,000 entries, 3 MB, `status --remote` on a page
 * 100,000 transitions old cost 1.47× its cost at 100; at 2,000, 1.22×).
 */
export const AUDIT_LOG_KEEP = 2_000;

/**
 * A write that leaves this many commits on top of the last snapshot (or the creation) compacts the
 * history (container.ts). What grows with the chain — the commits a fresh clone or `status --remote`
 * fetches, the records the timeline reads (one per commit), the commits a depth check walks — then
 * never passes its cost at 100 transitions, which issue 30's targets are measured against (at 1,000
 * the benchmark measured the timeline 9× its cost at 100). One compaction (≤ 100 records read, one
 * audit.log of ≤ 2,000 entries written and checked by the guard: a few seconds) is spread over 100
 * writes, a few percent of each.
 */
export const AUTO_COMPACT_AFTER = 100;

export { type AuditEntry, lineEntry } from './auditEntry';

/**
 * Record files read per `git cat-file --batch` while walking a history: a history compacted by itself
 * ({@link AUTO_COMPACT_AFTER} commits at most on its snapshot) is read by one process, whose start costs the
 * extension host about 7 ms of CPU; a longer one (compaction refused by the host) in batches of bounded memory.
 */
const BATCH = 128;

export type CompactResult = { readonly ok: true; readonly revision: string | null; readonly squashed: number } | { readonly ok: false };

export class AuditHistory {
  /** What this process has parsed of the histories it read (one ref per container; a lease's ref has none read). */
  private readonly parsed = new Map<string, Promise<ParsedHistory>>();

  /**
   * @param keep whether parsed entries are kept between processes, in the clone's `.git/lockstep/`
   * (parsedHistory.ts).
   */
  constructor(
    private readonly cells: GitRefCells,
    private readonly refs: GitRefs,
    private readonly keep = false,
  ) {}

  /**
   * The newest `limit` audit entries of a record ref, newest first; empty when there is no record. From
   * `revision` when given (a commit of the ref that was read before, and proven): nothing written since is listed.
   */
  async read(ref: string, limit: number, revision?: string): Promise<AuditEntry[]> {
    if (revision !== undefined) return this.entriesFrom(ref, revision, limit);
    const current = await this.cells.readStored(ref);
    return current === null ? [] : this.entriesFrom(ref, current.revision, limit);
  }

  /**
   * Squashes the history of a record ref into one snapshot commit; `{ok:false}` when it moved meanwhile
   * (or, with `expected`, when it is not at that revision).
   */
  async compact(ref: string, expected?: string): Promise<CompactResult> {
    const current = await this.cells.readStored(ref);
    if (current === null) return { ok: true, revision: null, squashed: 0 };
    if (expected !== undefined && current.revision !== expected) return { ok: false };
    const commits = await this.refs.log(current.revision, Infinity);
    if (commits.length === 1 && commits[0].snapshot) return { ok: true, revision: current.revision, squashed: 0 };
    const entries = await entriesOf(this.refs, commits, AUDIT_LOG_KEEP, await this.parsedOf(ref));
    const auditLog = auditLogText(entries);
    // The snapshot is stamped with the record's last line, as the server guard requires (recordCommit.ts).
    const line = lastAuditLine(parseValue(current.text));
    const written: CasResult = await this.cells.write(
      ref,
      current.revision,
      [
        { name: RECORD_FILE, content: current.text },
        { name: AUDIT_FILE, content: auditLog },
      ],
      compactionSubject(entries.length),
      false,
      [`${SNAPSHOT_TRAILER}: ${entries.length}`],
      line !== undefined ? stampEnv(stampOf(line)) : undefined,
    );
    return written.ok ? { ok: true, revision: written.revision, squashed: commits.length } : { ok: false };
  }

  private async entriesFrom(ref: string, revision: string, limit: number): Promise<AuditEntry[]> {
    const [commits, parsed] = await Promise.all([this.refs.log(revision, limit), this.parsedOf(ref)]);
    return entriesOf(this.refs, commits, limit, parsed);
  }

  /** What this process parsed of `ref`'s history; kept on disk as `.git/lockstep/history-<digest of the ref>.json`. */
  private parsedOf(ref: string): Promise<ParsedHistory> {
    let parsed = this.parsed.get(ref);
    if (parsed === undefined) {
      parsed = this.keepFile(ref).then(file => new ParsedHistory(2 * AUDIT_LOG_KEEP, file));
      this.parsed.set(ref, parsed);
    }
    return parsed;
  }

  private async keepFile(ref: string): Promise<string | undefined> {
    if (!this.keep) return undefined;
    const digest = createHash('sha256').update(ref).digest('hex').slice(0, 32);
    try {
      return path.join(await this.refs.gitDirectory(), 'lockstep', `history-${digest}.json`);
    } catch {
      return undefined; // no git directory to keep it in: the entries are kept in memory only
    }
  }

  /** Whether the history at `revision` has at least `writes` commits on top of its first (its last snapshot, or the creation). */
  reaches(revision: string, writes: number): Promise<boolean> {
    return this.refs.hasAncestor(revision, writes);
  }
}

/** What a compaction of the history at `revision` keeps: its newest {@link AUDIT_LOG_KEEP} entries, newest first. */
export async function keptEntries(refs: GitRefs, revision: string): Promise<AuditEntry[]> {
  return entriesOf(refs, await refs.log(revision, Infinity), AUDIT_LOG_KEEP);
}

/** The text of a snapshot's audit.log: the entries oldest first, one JSON object per line. */
export function auditLogText(newestFirst: readonly AuditEntry[]): string {
  return `${newestFirst
    .slice()
    .reverse()
    .map(entry => JSON.stringify(entry))
    .join('\n')}\n`;
}

/**
 * The newest `limit` entries of `commits` (a first-parent history, newest first): one per commit down to
 * the first snapshot, then the snapshot's audit.log. Every file not yet in `parsed` is read in one
 * `git cat-file --batch` per {@link BATCH} commits, the snapshot's audit.log with the last of them.
 */
async function entriesOf(refs: GitRefs, commits: readonly CommitInfo[], limit: number, parsed?: ParsedHistory): Promise<AuditEntry[]> {
  const snapshotAt = commits.findIndex(c => c.snapshot);
  const chain = commits.slice(0, Math.min(snapshotAt < 0 ? commits.length : snapshotAt, limit));
  const snapshot = snapshotAt >= 0 && snapshotAt < limit ? commits[snapshotAt] : undefined;
  const unread = chain.filter(c => parsed?.entry(c.revision) === undefined);
  let archive = snapshot === undefined ? undefined : parsed?.archived(snapshot.revision);
  const fresh = new Map<string, AuditEntry>();
  for (let from = 0; from < unread.length || (snapshot !== undefined && archive === undefined); from += BATCH) {
    const batch = unread.slice(from, from + BATCH);
    const last = from + BATCH >= unread.length;
    const withArchive = last && snapshot !== undefined && archive === undefined;
    const files = await refs.readBlobs([
      ...batch.map(c => ({ revision: c.revision, name: RECORD_FILE })),
      ...(withArchive ? [{ revision: snapshot.revision, name: AUDIT_FILE }] : []),
    ]);
    for (const [i, commit] of batch.entries()) fresh.set(commit.revision, entryOf(commit, files[i]));
    if (withArchive) {
      const text = files[batch.length];
      archive = parseAuditLog(text === null ? null : text.toString('utf8'));
      parsed?.rememberArchive(snapshot.revision, archive);
    }
  }
  const entries = chain.map(c => fresh.get(c.revision) ?? (parsed?.entry(c.revision) as AuditEntry));
  // Oldest first, so that the newest are the last forgotten.
  for (let j = entries.length - 1; j >= 0; j--) parsed?.remember(entries[j]);
  if (fresh.size > 0) parsed?.save(entries);
  if (archive !== undefined) for (let j = archive.length - 1; j >= 0 && entries.length < limit; j--) entries.push(archive[j]);
  return entries;
}

/** One write's entry: the new audit line of its record.json (a value that is no record: its commit). */
function entryOf(commit: CommitInfo, record: Buffer | null): AuditEntry {
  if (record === null) throw damaged(`a commit of its history has no ${RECORD_FILE}`);
  if (record.length > MAX_RECORD_BYTES) throw damaged(`a commit of its history has a ${RECORD_FILE} larger than ${MAX_RECORD_BYTES} bytes`);
  const line = lastAuditLine(parseValue(record.toString('utf8')));
  if (line === undefined) return { revision: commit.revision, time: commit.time, author: commit.author, summary: commit.summary };
  return lineEntry(commit.revision, line);
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw damaged(`a commit of its history has a ${RECORD_FILE} that is not JSON`, cause);
  }
}

function parseAuditLog(text: string | null): AuditEntry[] {
  if (text === null) throw damaged(`its snapshot commit has no ${AUDIT_FILE}`);
  const entries: AuditEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (cause) {
      throw damaged(`its ${AUDIT_FILE} has a line that is not JSON`, cause);
    }
    const kept = storedEntry(entry);
    if (kept === undefined) throw damaged(`its ${AUDIT_FILE} has an entry of the wrong shape`);
    entries.push(kept);
  }
  return entries;
}
