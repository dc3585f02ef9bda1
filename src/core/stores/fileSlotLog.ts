import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockBackendError } from '../errors';
import { code, damaged, fileIo, newNonce, removeOrphanTemp, TEMP_PREFIX, unlinkQuietly, writeTempFile } from './fileIo';
import { encodeRecord, HEADER_BYTES, logFormat, MAX_RECORD_BYTES, nextLegacyRecord, nextRecord } from './slotLogFraming';
import type { CasResult, VersionedRecord } from './store';

/**
 * The file driver's lease slots (stores/leaseSlots.ts) as append-only logs: a compare-and-swap that
 * creates no directory entry, so a lease operation costs a few reads and one append instead of the
 * directory operations of a revision folder.
 *
 * A slot is a folder with one current log, `<generation>.log`. Every write appends one record with
 * a single write(2) on a descriptor opened with O_APPEND; the kernel orders concurrent appends, so
 * the log is one total order that every process reads alike. A record names the sequence number it
 * creates (`s`): it is accepted when it is exactly one more than the sequence of the state before
 * it in the log, and ignored otherwise (its writer read a state that is no longer current). Each
 * accepted record creates a new sequence number, so "one more than the state I read" can only
 * be accepted on top of that very state: this is the compare-and-swap. A writer appends, then reads
 * the log up to its own record (found by its nonce) to learn whether it was accepted.
 *
 * Framing (slotLogFraming.ts): each record carries its length and a CRC-32 of its body, in a header
 * with a CRC-32 of its own, in ASCII (other characters are written as JSON escapes, so lengths count
 * both bytes and characters). A record cut off at the end of the file is not read yet (it may still
 * be arriving, or be an append torn by a crash) and is judged once something follows it: a record
 * cut short with a verified record starting inside it is torn and skipped; anything else that does
 * not verify — a complete record whose checksum fails, bytes that are no record — is damage and
 * raises LockStorageError, so a damaged log is never read as a free lease.
 *
 * Logs of the earlier framing (`\n@<length>:<JSON>`, no checksum; never in a release, but in the
 * stores of development builds) are not refused, since removing a slot restarts its fencing tokens:
 * the first process that opens one reads it as strictly as that framing allows (a complete record
 * must parse; only a record overrun by the next one is torn), seals it with a record of that
 * framing — so a process of the earlier build that has it open sees the seal and moves on, then
 * fails loudly on the new log, whose records it cannot read — and carries its state into a new
 * generation in the checksummed framing, as a rotation does. From then on only checksummed logs exist.
 *
 * Generations keep the log small. When a log passes ROTATE_BYTES, a writer appends a seal (itself
 * a compare-and-swap, so the sealed state is one state); records after an accepted seal are
 * ignored. Then anyone who sees the seal creates generation + 1, whose first record is a snapshot of
 * the sealed state (created with link(2), exclusive, so racing creators make the same file once),
 * and removes the older generations. The newest generation is never removed, and a generation is
 * created only after the one before it was sealed, so a process that opens a log checks, after
 * opening it, that no newer generation exists: a log opened that way is a real current one (a
 * generation re-created under an old name by a slow creator always has a newer one beside it).
 * A process killed at any instant leaves at worst a torn record, a temporary file, or a sealed
 * generation not yet removed; the next reader finishes the rotation.
 */

const LOG_FILE = /^(\d{10})\.log$/;
/** Past this size a log is sealed and a new generation starts (8 slots stay under 1 MB). */
const ROTATE_BYTES = 64 * 1024;
const READ_CHUNK = 64 * 1024;
/** One read buffer for the process: every use is synchronous, from read to decode. */
const readBuffer = Buffer.allocUnsafe(READ_CHUNK);
/** Reading a log: no following of symbolic links, no creating. */
const OPEN_FLAGS = fs.constants.O_RDWR | fs.constants.O_APPEND | (fs.constants.O_NOFOLLOW ?? 0);

type Kind = 'snap' | 'write' | 'seal';
interface LogRecord {
  readonly s: number;
  readonly k: Kind;
  readonly n?: string;
  readonly v?: unknown;
}

/** What this process knows of one slot's current log. */
interface SlotView {
  generation: number;
  /** The log's framing, known once its first bytes are read (slotLogFraming.ts). */
  format: 'v2' | 'legacy' | undefined;
  fd: number;
  /** Bytes (= ASCII characters) read and judged so far. */
  offset: number;
  /** Unjudged text at the end (a record that may still be arriving). */
  pending: string;
  seq: number;
  value: unknown;
  sealed: boolean;
}

export class SlotLogs {
  private readonly views = new Map<string, SlotView>();

  constructor(private readonly ensureDir: (dir: string) => void) {}

  /** The slot's current value; null before its first write. */
  get(dir: string): VersionedRecord | null {
    const view = this.current(dir);
    return view.value === null ? null : { value: view.value, revision: String(view.seq) };
  }

  /** The last value this process saw (no I/O); the compare-and-swap validates it. */
  peek(dir: string): VersionedRecord | undefined {
    const view = this.views.get(dir);
    return view === undefined || view.value === null ? undefined : { value: view.value, revision: String(view.seq) };
  }

  put(dir: string, expectedRevision: string | null, value: unknown): CasResult {
    const expected = expectedRevision === null ? 0 : Number(expectedRevision);
    if (!Number.isSafeInteger(expected)) throw damaged('a lease slot revision that is not one this driver wrote');
    const view = this.current(dir);
    if (view.seq !== expected) return { ok: false };
    const accepted = this.append(view, { s: expected + 1, k: 'write', v: value });
    if (!accepted) return { ok: false };
    if (view.offset + view.pending.length > ROTATE_BYTES) this.rotate(dir, view);
    return { ok: true, revision: String(expected + 1) };
  }

  close(): void {
    for (const view of this.views.values()) fileIo(() => fs.closeSync(view.fd));
    this.views.clear();
  }

  /** The slot's view, caught up with its log, on a generation that is not sealed. */
  private current(dir: string): SlotView {
    let view = this.views.get(dir);
    for (let attempt = 0; attempt < 100; attempt++) {
      if (view === undefined) {
        view = this.open(dir);
        this.views.set(dir, view);
      }
      this.catchUp(view);
      if (view.format === 'legacy' && !view.sealed) {
        // A log of the earlier framing: seal it and carry its state into a checksummed generation.
        this.append(view, { s: view.seq + 1, k: 'seal' });
        if (!view.sealed) continue; // another write came first: read it, then seal again
      }
      if (!view.sealed) {
        // A log that left the folder without a seal was removed by hand or replaced: open what is there now.
        if (fileIo(() => fs.fstatSync(view!.fd).nlink) > 0) return view;
        this.drop(dir, view);
        view = undefined;
        continue;
      }
      this.nextGeneration(dir, view);
      this.drop(dir, view);
      view = undefined;
    }
    throw new LockBackendError('file', 'A lease slot kept moving to new generations while being read; try again.', { retryable: true });
  }

  /** Appends one record, then reads up to it: true when it was accepted. */
  private append(view: SlotView, record: Omit<LogRecord, 'n'>): boolean {
    const nonce = newNonce();
    const json = asciiJson({ ...record, n: nonce });
    const bytes = Buffer.from(view.format === 'legacy' ? `\n@${json.length}:${json}` : encodeRecord(json), 'latin1');
    fileIo(() => {
      const written = fs.writeSync(view.fd, bytes);
      if (written !== bytes.length)
        throw new LockBackendError('file', 'A lease record was written only in part (disk full?); try again.', { retryable: true });
    });
    const outcome = this.catchUp(view, nonce);
    if (outcome === undefined) {
      throw new LockBackendError('file', 'A lease record was written but could not be read back; try again.', { retryable: true });
    }
    return outcome;
  }

  /**
   * Reads what was appended since the view's offset and applies it. With `nonce`, says whether
   * that record was accepted (undefined when it was not seen).
   */
  private catchUp(view: SlotView, nonce?: string): boolean | undefined {
    let outcome: boolean | undefined;
    for (;;) {
      const position = view.offset + view.pending.length;
      const n = fileIo(() => fs.readSync(view.fd, readBuffer, 0, READ_CHUNK, position));
      if (n === 0) break;
      view.pending += readBuffer.toString('latin1', 0, n);
      for (;;) {
        if (view.format === undefined) {
          const format = logFormat(view.pending);
          if (format === 'damaged') throw damaged('a lease slot log that does not start with a record');
          if (format === undefined) break;
          view.format = format;
        }
        if (view.pending.length === 0) break;
        const framed = view.format === 'v2' ? nextRecord(view.pending) : nextLegacyRecord(view.pending);
        if (framed.kind === 'incomplete') break;
        if (framed.kind === 'damaged') throw damaged(`${framed.what} in a lease slot log`);
        view.offset += framed.end;
        view.pending = view.pending.slice(framed.end);
        if (framed.kind === 'torn') continue; // cut short by a crash, then appended after: never applied by anyone
        const record = parseRecord(framed.json);
        const accepted = apply(view, record);
        if (nonce !== undefined && record.n === nonce) outcome = accepted;
      }
      if (view.pending.length > MAX_RECORD_BYTES + HEADER_BYTES)
        throw damaged('a lease slot log record longer than any this driver writes');
      if (n < READ_CHUNK) break;
    }
    return outcome;
  }

  /** Opens the newest generation (creating the first), checking afterwards that it still is the newest. */
  private open(dir: string): SlotView {
    for (let attempt = 0; attempt < 100; attempt++) {
      let newest = this.generations(dir).pop();
      if (newest === undefined) {
        this.create(dir, 1, { s: 0, k: 'snap', v: null });
        newest = 1;
      }
      const file = logPath(dir, newest);
      let fd: number;
      try {
        fd = fs.openSync(file, OPEN_FLAGS);
      } catch (error) {
        const errno = code(error);
        if (errno === 'ENOENT') continue; // removed by a rotation meanwhile: look again
        if (errno === 'ELOOP' || errno === 'EISDIR') throw damaged('a lease slot log that is not a file');
        return fileIo(() => {
          throw error;
        });
      }
      const confirmed = this.generations(dir).pop();
      if (confirmed !== newest) {
        fileIo(() => fs.closeSync(fd));
        if (confirmed !== undefined && confirmed > newest) unlinkQuietly(file); // a stale re-creation
        continue;
      }
      const view: SlotView = { generation: newest, format: undefined, fd, offset: 0, pending: '', seq: -1, value: null, sealed: false };
      this.catchUp(view);
      if (view.seq < 0) {
        // No snapshot at the start: damage, unless the file is still being created (never: link publishes it whole).
        fileIo(() => fs.closeSync(fd));
        throw damaged('a lease slot log without its first record');
      }
      return view;
    }
    throw new LockBackendError('file', 'A lease slot could not be opened: its logs kept changing; try again.', { retryable: true });
  }

  /** Seals a log that outgrew ROTATE_BYTES, then moves to the next generation. */
  private rotate(dir: string, view: SlotView): void {
    if (!view.sealed) this.append(view, { s: view.seq + 1, k: 'seal' });
    if (!view.sealed) return; // another write came first; a later writer seals
    this.nextGeneration(dir, view);
    this.drop(dir, view);
  }

  /** After a seal: the next generation, starting from the sealed state; older generations go. */
  private nextGeneration(dir: string, view: SlotView): void {
    const next = view.generation + 1;
    this.create(dir, next, { s: view.seq, k: 'snap', v: view.value });
    for (const generation of this.generations(dir)) {
      if (generation < next) fileIo(() => unlinkQuietly(logPath(dir, generation)));
    }
  }

  private drop(dir: string, view: SlotView): void {
    fileIo(() => fs.closeSync(view.fd));
    this.views.delete(dir);
  }

  /** Creates generation `generation` holding only `snapshot`, unless it exists (link(2) is exclusive). */
  private create(dir: string, generation: number, snapshot: LogRecord): void {
    const json = asciiJson(snapshot);
    fileIo(() => {
      const { temp } = writeTempFile(dir, encodeRecord(json), this.ensureDir);
      try {
        fs.linkSync(temp, logPath(dir, generation));
      } catch (error) {
        if (code(error) !== 'EEXIST') throw error;
      } finally {
        unlinkQuietly(temp);
      }
    });
  }

  /** The generations on disk, oldest first (and orphaned temporary files of dead processes removed). */
  private generations(dir: string): number[] {
    return fileIo(() => {
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch (error) {
        if (code(error) === 'ENOENT') return [];
        if (code(error) === 'ENOTDIR') throw damaged('a lease slot folder that is not a folder');
        throw error;
      }
      const found: number[] = [];
      for (const name of names) {
        const match = LOG_FILE.exec(name);
        if (match) found.push(Number(match[1]));
        else if (name.startsWith(TEMP_PREFIX)) removeOrphanTemp(dir, name);
      }
      return found.sort((a, b) => a - b);
    });
  }
}

function logPath(dir: string, generation: number): string {
  return path.join(dir, `${String(generation).padStart(10, '0')}.log`);
}

/** A verified record's body as a log record: one that does not parse as one is damage, not skipped. */
function parseRecord(json: string): LogRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw damaged('a lease slot log record that is not JSON');
  }
  if (!isLogRecord(parsed)) throw damaged('a lease slot log record of the wrong shape');
  return parsed;
}

/** JSON in ASCII: any other character as a \\u escape (still valid JSON, same value). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isLogRecord(value: unknown): value is LogRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return Number.isSafeInteger(r.s) && (r.s as number) >= 0 && (r.k === 'snap' || r.k === 'write' || r.k === 'seal');
}

/** Applies one record to the view; true when it was accepted. */
function apply(view: SlotView, record: LogRecord): boolean {
  if (view.seq < 0) {
    // The first record of a generation must be its snapshot.
    if (record.k !== 'snap') throw damaged('a lease slot log that does not start with its snapshot');
    view.seq = record.s;
    view.value = record.v ?? null;
    return true;
  }
  if (view.sealed || record.k === 'snap' || record.s !== view.seq + 1) return false;
  view.seq = record.s;
  if (record.k === 'seal') view.sealed = true;
  else view.value = record.v ?? null;
  return true;
}
