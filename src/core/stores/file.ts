import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ResolvedConfig } from '../config';
import { LockBackendError, LockConfigurationError, LockStorageError } from '../errors';
import { code, damaged, fileIo, newNonce, removeOrphanTemp, TEMP_PREFIX, unlinkQuietly, writeTempFile } from './fileIo';
import { SlotLogs } from './fileSlotLog';
import { frameRevision, unframeRevision } from './revisionFraming';
import { decodeLinkTarget, encodeLinkTarget } from './linkTarget';
import { namespaceDigest } from '../names';
import { CasDriver, type CasCells } from './casDriver';
import { jsonText } from './serializedJson';
import type { CasResult, VersionedRecord, Watch, WatchOptions } from './store';
import { watchDir } from './fileWatch';

/**
 * The file driver: correct across processes on one local filesystem, with nothing a dead process
 * can leave held. (Below: the revision folders of container records; leases: fileSlotLog.ts.)
 *
 * Node has no flock(2) without a native addon, and a lock file whose owner was killed is a mutex
 * that has to be broken — which cannot be done without a race. So this driver has no mutex at all.
 * Every cell (one lease or one container record) is a folder of revision files `<revision>.json`;
 * the current value is the highest revision. A write of revision N+1 creates that name atomically
 * and exclusively: a small record as the target of a symbolic link (encoded: linkTarget.ts) — symlink(2) makes the
 * name and its content in one step — and a larger one as a temporary file published with link(2).
 * Both fail atomically with EEXIST when N+1 already exists: exactly one writer wins each revision,
 * and a process killed at any instant leaves at worst a temporary file, never a held lock nor a
 * half-written revision. (A record in a symbolic link is never followed, only read with readlink.)
 *
 * Pruning makes one more case possible. A writer of revision M removes the revisions below M-1, so
 * a writer paused between reading N and publishing N+1 can find the name N+1 free again after
 * others wrote N+1..N+3 and pruned it: a stale write. Facts the driver relies on:
 *  1. The highest revision is never removed (pruning removes only revisions below the pruner's
 *     base, withdrawal only a revision below the highest), so the highest never decreases.
 *  2. A stale N+1 is published only while N+3 or higher exists (the true N+1 was pruned only
 *     once such a revision existed, and by 1 it still does), so a stale file is never the
 *     highest: readers, and writers building on what they read, never see it.
 * So after publishing N+1 the writer lists the folder. If the highest is at most N+2, the write
 * stands (2). If it is higher, others wrote on top: of this write, or of the true N+1 that this
 * stale write repeats. To tell the two apart, every revision records its lineage — its own random
 * nonce, then the nonces of up to LINEAGE-1 ancestors — and the highest revision (never stale, by
 * 2) names the true N+1's nonce: this writer's means success, another means the write was stale, so
 * the writer withdraws its file and reports failure. Past LINEAGE revisions the answer is unknown:
 * the writer withdraws and reports a retryable backend error rather than guess. Before publishing,
 * the writer checks that its base is still on disk (the revision string `<number>:<nonce>` names
 * it), which turns nearly every stale write into a plain failure before anything is published.
 *
 * A revision's text is `2:<CRC-32 of the JSON>:<JSON>` (revisionFraming.ts). A revision is published
 * whole, so a reader never meets a half-written one: one that does not verify, parse, or hold an
 * envelope is damage and raises LockStorageError, never a missing or free record.
 *
 * The revision folders above hold container records: `<root>/<sha256(namespace)>/<2 hex>/r<digest>/`
 * with `<16-digit revision>.json` files. Plain leases do not use them: they live in 8 slots (one
 * fencing counter per slot, stores/leaseSlots.ts), each an append-only log in
 * `<root>/<sha256(namespace)>/s<2 hex>/` (fileSlotLog.ts), so a lease operation costs no directory
 * operation, a released lease leaves nothing behind, and the store stays bounded however many
 * distinct names come and go. Folders 0700, files 0600 (a symbolic link has no mode of its own; the 0700 folders keep it
 * private). There are no mutex files. Every operation does its disk work synchronously and then
 * lets the process's pending I/O run (one turn of the event loop) before it resolves; a client
 * refused the same name in a tight loop is paced (refusalPacing.ts).
 *
 * Physical clean-up (README "Physical clean-up"): none is needed for leases. A container record
 * stays until its namespace's folder is removed, which is safe only with every process using the
 * namespace stopped.
 */

const REVISION_FILE = /^(\d{16})\.json$/;
/** How many nonces (own + ancestors) a revision records; see the module comment. */
const LINEAGE = 32;
const NONCE = /^[0-9a-f]{12}$/;
const REVISION = /^(\d{1,16}):([0-9a-f]{12})$/;
/** Cells whose last seen revision an instance remembers (see `known`). */
const MAX_REMEMBERED = 1024;
/**
 * Plain leases live in this many slots (stores/leaseSlots.ts), each a log of up to 64 KB
 * (fileSlotLog.ts): the store stays bounded, and a log's rotation (a few directory operations) comes
 * once in hundreds of writes.
 */
export const FILE_LEASE_SLOTS = 8;

/** What a revision file holds: the lineage (own nonce first) and the stored value. */
interface Envelope {
  readonly l: string[];
  readonly v: unknown;
}
/** Revisions are bounded to keep records small; a record beyond this is treated as damaged. */
const MAX_RECORD_BYTES = 1024 * 1024;
/**
 * Records whose encoded link target (linkTarget.ts) is at most this size are published as a symbolic
 * link's target (below macOS's 1024-byte limit).
 */
const MAX_LINK_BYTES = 1000;

/** A revision as read or written: its text, and how to tell later that the file is still the same. */
type Published = { readonly kind: 'link' } | { readonly kind: 'file'; readonly stat: FileIdentity };
interface FileIdentity {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

class FileCells implements CasCells {
  private readonly root: string;
  private readonly namespaceDir: string;
  private prepared = false;
  /**
   * The last revision this instance read or wrote per cell folder, with its lineage, its text on
   * disk and its envelope's JSON: a write after a read needs no second read, and `peek` can offer it
   * for speculation.
   */
  private readonly known = new Map<string, { revision: string; text: string; json: string; lineage: string[]; published: Published }>();
  /** False once this filesystem refused a symbolic link (e.g. Windows without the privilege). */
  private symlinks = true;
  /** Lease slots: append-only logs (fileSlotLog.ts), not revision folders. */
  private readonly slots = new SlotLogs(dir => this.ensureDir(dir));

  constructor(rootPath: string, prefix: string) {
    this.root = rootPath;
    this.namespaceDir = path.join(rootPath, namespaceDigest(prefix));
  }

  async get(cell: string): Promise<VersionedRecord | null> {
    if (isSlot(cell)) return this.slots.get(this.cellDir(cell));
    return this.readCurrent(this.cellDir(cell));
  }

  peek(cell: string): VersionedRecord | undefined {
    if (isSlot(cell)) return this.slots.peek(this.cellDir(cell));
    const known = this.known.get(this.cellDir(cell));
    return known === undefined ? undefined : { value: (JSON.parse(known.json) as Envelope).v, revision: known.revision };
  }

  async put(cell: string, expectedRevision: string | null, value: unknown): Promise<CasResult> {
    const dir = this.cellDir(cell);
    if (isSlot(cell)) return this.slots.put(dir, expectedRevision, value);
    // A cell that holds revisions, readable or damaged, is not created again: revision 1 would be published below
    // them, and a damaged newest one would leave it there for the day the damaged ones are removed.
    if (expectedRevision === null && fileIo(() => listRevisions(dir)).length > 0) return { ok: false };
    const base = expectedRevision === null ? { number: 0, lineage: [] } : this.baseLineage(dir, expectedRevision);
    if (base === undefined) return { ok: false }; // the base is gone from disk, so it is no longer current
    const next = base.number + 1;
    const nonce = newNonce();
    const lineage = [nonce, ...base.lineage].slice(0, LINEAGE);
    // What JSON.stringify({ l: lineage, v: value }) gives, with a page's text made once (serializedJson.ts).
    const v = jsonText(value);
    const json = v === undefined ? JSON.stringify({ l: lineage }) : `{"l":${JSON.stringify(lineage)},"v":${v}}`;
    const text = frameRevision(json);
    const published = this.publish(dir, next, text);
    if (published === undefined) return { ok: false };

    let confirmed: ReturnType<FileCells['confirm']>;
    try {
      confirmed = this.confirm(dir, next, nonce);
    } catch (error) {
      // The newest revision, above this one, could not be read (damaged): this write is not the record's and is withdrawn.
      fileIo(() => unlinkQuietly(revisionPath(dir, next)));
      throw error;
    }
    const { verdict, revisions } = confirmed;
    if (verdict !== 'mine') {
      fileIo(() => unlinkQuietly(revisionPath(dir, next))); // not the highest, so no reader needs it
      if (verdict === 'lost') return { ok: false };
      throw new LockBackendError('file', 'A write could not be confirmed because other processes wrote many times meanwhile; try again.');
    }
    // Prune what no reader or writer needs any more: everything below this write's base.
    fileIo(() => {
      for (const revision of revisions) if (revision < next - 1) unlinkQuietly(revisionPath(dir, revision));
    });
    const revision = `${next}:${nonce}`;
    this.remember(dir, revision, text, json, lineage, published);
    return { ok: true, revision };
  }

  /**
   * Creates revision `next` atomically and exclusively, or returns undefined when it exists. Small
   * records are the target of a symbolic link: symlink(2) creates the name and its content in one
   * step and fails with EEXIST like link(2), with no temporary file. Larger records, or filesystems
   * without symbolic links, use a temporary file published with link(2).
   */
  private publish(dir: string, next: number, text: string): Published | undefined {
    const target = revisionPath(dir, next);
    const link = this.symlinks ? encodeLinkTarget(text) : '';
    if (this.symlinks && link.length <= MAX_LINK_BYTES) {
      const made = fileIo(() => {
        for (let attempt = 0; ; attempt++) {
          try {
            fs.symlinkSync(link, target, 'file');
            return true;
          } catch (error) {
            const errno = code(error);
            if (errno === 'EEXIST') return false;
            if (errno === 'ENOENT' && attempt === 0) {
              this.ensureDir(dir);
              continue;
            }
            if (errno === 'ENOENT') throw error;
            this.symlinks = false; // EPERM, EINVAL, ENOTSUP…: not on this filesystem; use files
            return undefined;
          }
        }
      });
      if (made !== undefined) return made ? { kind: 'link' } : undefined;
    }
    const { temp, stat } = fileIo(() => {
      const written = writeTempFile(dir, text, d => this.ensureDir(d));
      return { temp: written.temp, stat: identity(written.stat) };
    });
    try {
      return fileIo(() => {
        try {
          fs.linkSync(temp, target);
          return { kind: 'file', stat } as const;
        } catch (error) {
          if (code(error) === 'EEXIST') return undefined;
          throw error;
        }
      });
    } finally {
      fileIo(() => unlinkQuietly(temp));
    }
  }

  /**
   * Decides whether the revision `next` this writer just published stands (see the module comment).
   * Returns the listing it decided on, for pruning.
   */
  private confirm(dir: string, next: number, nonce: string): { verdict: 'mine' | 'lost' | 'unknown'; revisions: number[] } {
    for (let attempt = 0; attempt < 100; attempt++) {
      const revisions = fileIo(() => listRevisions(dir));
      const highest = revisions.length > 0 ? revisions[revisions.length - 1] : next;
      if (highest <= next + 1) return { verdict: 'mine', revisions };
      if (highest - next >= LINEAGE) return { verdict: 'unknown', revisions };
      const top = this.readEnvelope(dir, highest);
      if (top === undefined) continue; // pruned under us: list again
      return { verdict: top.l[highest - next] === nonce ? 'mine' : 'lost', revisions };
    }
    return { verdict: 'unknown', revisions: [] };
  }

  /** The lineage of the base revision a writer read; undefined when that revision is no longer on disk. */
  private baseLineage(dir: string, revision: string): { number: number; lineage: string[] } | undefined {
    const match = REVISION.exec(revision);
    if (!match) throw new LockStorageError('file', 'A record revision is not one this driver wrote; the store is damaged.');
    const number = Number(match[1]);
    const known = this.known.get(dir);
    if (known?.revision === revision) {
      // One cheap check that the base is still on disk, unchanged: one already pruned means others
      // moved on (do not publish a stale write); one changed means damage, which a full read reports.
      const unchanged = fileIo(() =>
        known.published.kind === 'link'
          ? readLinkQuietly(revisionPath(dir, number)) === known.text // decoded, as read
          : sameFile(fs.lstatSync(revisionPath(dir, number), { throwIfNoEntry: false }), known.published.stat),
      );
      return unchanged ? { number, lineage: known.lineage } : undefined;
    }
    const envelope = this.readEnvelope(dir, number);
    if (envelope === undefined || envelope.l[0] !== match[2]) return undefined;
    return { number, lineage: envelope.l };
  }

  private remember(dir: string, revision: string, text: string, json: string, lineage: string[], published: Published): void {
    if (this.known.size >= MAX_REMEMBERED && !this.known.has(dir)) this.known.clear();
    this.known.set(dir, { revision, text, json, lineage, published });
  }

  watch(cell: string, onChange: () => void, options?: WatchOptions): Watch {
    const dir = this.cellDir(cell);
    fileIo(() => this.ensureDir(dir));
    return watchDir(dir, onChange, options?.onHealth);
  }

  async close(): Promise<void> {
    // Only the slots' logs stay open between operations.
    this.slots.close();
  }

  private cellDir(cell: string): string {
    if (!this.prepared) this.prepare();
    // Lease slots (few, fixed) sit in the namespace folder; records fan out by their digest.
    return isSlot(cell) ? path.join(this.namespaceDir, cell) : path.join(this.namespaceDir, cell.slice(1, 3), cell);
  }

  /** First use: check the storage root once (absolute, no symbolic link in it or above it). */
  private prepare(): void {
    fileIo(() => {
      // Checked before creating anything (so nothing is made through a link) and again after.
      assertNoLink(this.root);
      fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
      assertNoLink(this.root);
      fs.mkdirSync(this.namespaceDir, { recursive: true, mode: 0o700 });
    });
    this.prepared = true;
  }

  private ensureDir(dir: string): void {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private readCurrent(dir: string): VersionedRecord | null {
    for (let attempt = 0; attempt < 100; attempt++) {
      const revisions = fileIo(() => listRevisions(dir));
      if (revisions.length === 0) return null;
      const number = revisions[revisions.length - 1];
      const read = this.readEnvelope(dir, number);
      if (read === undefined) continue; // pruned under us: list again
      const revision = `${number}:${read.l[0]}`;
      this.remember(dir, revision, read.text, read.json, read.l, read.published);
      return { value: read.v, revision };
    }
    throw new LockBackendError('file', 'The record kept changing while being read; try again.');
  }

  /**
   * Reads one revision (link or file); undefined when it does not exist (any more). Damage throws:
   * a revision that does not verify (revisionFraming.ts), parse or hold an envelope is never skipped.
   */
  private readEnvelope(dir: string, revision: number): (Envelope & { text: string; json: string; published: Published }) | undefined {
    let text: string;
    let published: Published;
    try {
      ({ text, published } = fileIo(() => readRevision(revisionPath(dir, revision))));
    } catch (error) {
      if (error instanceof LockBackendError && code(error.cause) === 'ENOENT') return undefined;
      throw error;
    }
    const json = unframeRevision(text);
    if (json === undefined) throw damaged('a container record revision whose checksum does not match');
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw damaged('a container record revision that is not JSON'); // no cause: its message would quote the record
    }
    if (!isEnvelope(parsed)) throw damaged('a container record revision of the wrong shape');
    return { l: parsed.l, v: parsed.v, text, json, published };
  }
}

/** Reads a revision: the target of a symbolic link, or else a whole file of at most MAX_RECORD_BYTES. */
function readRevision(file: string): { text: string; published: Published } {
  let target: string | undefined;
  try {
    target = fs.readlinkSync(file);
  } catch (error) {
    if (code(error) !== 'EINVAL') throw error; // EINVAL: a regular file, read below
  }
  if (target !== undefined) {
    const text = decodeLinkTarget(target);
    if (text === undefined) throw damaged('a container record revision whose link target is not one this driver writes');
    return { text, published: { kind: 'link' } };
  }
  const fd = fs.openSync(file, 'r');
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw damaged('a container record revision that is not a file');
    if (stat.size > MAX_RECORD_BYTES) throw damaged('a container record revision larger than any this driver writes');
    const buffer = Buffer.allocUnsafe(stat.size);
    let filled = 0;
    while (filled < stat.size) {
      const n = fs.readSync(fd, buffer, filled, stat.size - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return { text: buffer.toString('utf8', 0, filled), published: { kind: 'file', stat: identity(stat) } };
  } finally {
    fs.closeSync(fd);
  }
}

/** The text of a record in a symbolic link (decoded, linkTarget.ts); undefined when absent, not a link, or not a target this driver writes. */
function readLinkQuietly(file: string): string | undefined {
  try {
    return decodeLinkTarget(fs.readlinkSync(file));
  } catch (error) {
    if (code(error) === 'ENOENT' || code(error) === 'EINVAL') return undefined;
    throw error;
  }
}

function identity(stat: fs.Stats): FileIdentity {
  return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
}

function sameFile(stat: fs.Stats | undefined, known: FileIdentity): boolean {
  return stat?.isFile() === true && stat.ino === known.ino && stat.size === known.size && stat.mtimeMs === known.mtimeMs;
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null || !('v' in value) || !('l' in value)) return false;
  const lineage = (value as { l: unknown }).l;
  return (
    Array.isArray(lineage) && lineage.length >= 1 && lineage.length <= LINEAGE && lineage.every(n => typeof n === 'string' && NONCE.test(n))
  );
}

/** Refuses a storage root that is, or lies below, a symbolic link (checked on its deepest existing folder). */
function assertNoLink(root: string): void {
  let existing = path.resolve(root);
  while (fs.lstatSync(existing, { throwIfNoEntry: false }) === undefined) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  if (fs.realpathSync(existing) !== existing) {
    throw new LockConfigurationError(
      'The storage path, or a folder above it, is a symbolic link; give the real path so that other users cannot redirect lock files.',
      { setting: 'path' },
    );
  }
}

function listRevisions(dir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if (code(error) === 'ENOENT') return [];
    throw error;
  }
  const revisions: number[] = [];
  for (const name of names) {
    const match = REVISION_FILE.exec(name);
    if (match) revisions.push(Number(match[1]));
    else if (name.startsWith(TEMP_PREFIX)) removeOrphanTemp(dir, name);
  }
  return revisions.sort((a, b) => a - b);
}

/** Lease slot cells (`s<2 hex>`, from CasDriver) live in logs; record cells in revision folders. */
function isSlot(cell: string): boolean {
  return cell.startsWith('s');
}

function revisionPath(dir: string, revision: number): string {
  return path.join(dir, `${String(revision).padStart(16, '0')}.json`);
}

export function createFileDriver(config: Pick<ResolvedConfig, 'path' | 'prefix'>): CasDriver {
  return new CasDriver('file', false, new FileCells(config.path, config.prefix), { leaseSlots: FILE_LEASE_SLOTS, yieldToIo: true });
}
