import type { AuditLine } from '../../lockRecord';
import { lastAuditLine, transitionSubject } from './recordCommit';

/** One entry of a record ref's history: what one write did (auditHistory.ts). */
export interface AuditEntry {
  /** Commit SHA of the write (for entries kept in a snapshot: the SHA it had before compaction). */
  readonly revision: string;
  /** Time of the write, epoch milliseconds: its audit line's (a value without one: the committer time). */
  readonly time: number;
  /** Who wrote it: its audit line's actor (a value without one: the git author). */
  readonly author: string;
  /** The audit line's summary, on one line. */
  readonly summary: string;
  /** The audit line itself (absent in entries compacted by older versions, and for values that are not records). */
  readonly line?: AuditLine;
}

/** The entry of a write whose record's new audit line is `line` (what a snapshot's audit.log keeps of it). */
export function lineEntry(revision: string, line: AuditLine): AuditEntry {
  return { revision, time: line.at, author: line.who, summary: transitionSubject(line), line };
}

/**
 * An entry as stored outside a commit (a snapshot's audit.log line, parsed; the clone's own cache of
 * parsed entries): its fields copied and checked, its audit line kept only when it is one. Undefined
 * when it is not an entry.
 */
export function storedEntry(value: unknown): AuditEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Record<string, unknown>;
  if (typeof e.revision !== 'string' || typeof e.time !== 'number' || typeof e.author !== 'string' || typeof e.summary !== 'string') {
    return undefined;
  }
  const line = lastAuditLine({ audit: [e.line] });
  return { revision: e.revision, time: e.time, author: e.author, summary: e.summary, ...(line ? { line } : {}) };
}
