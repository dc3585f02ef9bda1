import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PID, removeOrphanTemp, TEMP_PREFIX } from '../fileIo';
import { type AuditEntry, storedEntry } from './auditEntry';

/**
 * What a reader of one record ref's history keeps of what it parsed, so that reading it again (the lock
 * page reads it when shown and after every change) parses only the commits written since: each commit's
 * entry, and the entries of the last snapshot's audit.log. A commit's SHA names its content, so an entry
 * derived from it never goes stale; only entries read whole are kept (a damaged record is read, and
 * refused, again).
 *
 * The commits' entries are also kept on disk, in the clone's `.git/lockstep/` (beside the session), so
 * that the first read in a new window or command does not parse again the up to 100 records written since
 * the last snapshot: on a page a year old each holds an audit at its 500-line cap, a few megabytes of JSON
 * in all (issue 30). The file holds only what the lock ref itself says, never a token. It is a cache:
 * a file that cannot be read, or is not what this writes, is ignored and replaced; one that cannot be
 * written (a read-only clone) changes nothing but the next read's cost.
 */
export class ParsedHistory {
  private readonly entries = new Map<string, AuditEntry>();
  private archive: { readonly revision: string; readonly entries: readonly AuditEntry[] } | undefined;
  private loaded: boolean;

  /**
   * @param maxEntries commits' entries kept in memory; the oldest are forgotten first.
   * @param file where the entries of the chain read last are kept between processes; none when undefined.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly file?: string,
  ) {
    this.loaded = file === undefined;
  }

  entry(revision: string): AuditEntry | undefined {
    this.load();
    return this.entries.get(revision);
  }

  remember(entry: AuditEntry): void {
    this.entries.delete(entry.revision);
    this.entries.set(entry.revision, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  archived(revision: string): readonly AuditEntry[] | undefined {
    return this.archive?.revision === revision ? this.archive.entries : undefined;
  }

  rememberArchive(revision: string, entries: readonly AuditEntry[]): void {
    this.archive = { revision, entries };
  }

  /**
   * Keeps `chain` (the commits' entries just listed, newest first) on disk for the next process. A cache, so a
   * failed write is dropped, not retried (atomicReplace.ts retries a rename Windows refuses for a moment: here the
   * next read writes it again). Temporary files that a killed process left here are removed (fileIo.ts
   * removeOrphanTemp: only those of a process that is gone).
   */
  save(chain: readonly AuditEntry[]): void {
    if (this.file === undefined) return;
    const dir = path.dirname(this.file);
    const temp = path.join(dir, `${TEMP_PREFIX}${PID}-${randomBytes(4).toString('hex')}-${path.basename(this.file)}`);
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(temp, JSON.stringify({ v: FORMAT, entries: chain }), { mode: 0o600 });
      fs.renameSync(temp, this.file);
    } catch {
      fs.rmSync(temp, { force: true });
      return;
    }
    try {
      for (const name of fs.readdirSync(dir)) if (name.startsWith(TEMP_PREFIX) && name.endsWith('.json')) removeOrphanTemp(dir, name);
    } catch {
      // left for the next save
    }
  }

  private load(): void {
    if (this.loaded || this.file === undefined) return;
    this.loaded = true;
    let stored: unknown;
    try {
      stored = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch {
      return;
    }
    const list = (stored as { v?: unknown; entries?: unknown } | null)?.entries;
    if ((stored as { v?: unknown } | null)?.v !== FORMAT || !Array.isArray(list)) return;
    const kept: AuditEntry[] = [];
    for (const value of list) {
      const entry = storedEntry(value);
      if (entry === undefined || !COMMIT.test(entry.revision)) return;
      kept.push(entry);
    }
    for (let j = kept.length - 1; j >= 0; j--) this.remember(kept[j]);
  }
}

/**
 * The file's format. Raise it whenever what an entry is derived into changes (auditEntry.ts lineEntry, recordCommit.ts
 * transitionSubject): entries an older build kept are then read again from their commits.
 */
const FORMAT = 1;
/** A commit's SHA-1 or SHA-256 name. */
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
