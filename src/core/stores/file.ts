import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../config';
import { LockBackendError, LockConfigurationError, LockStorageError } from '../errors';
import { namespaceDigest } from '../names';
import { CasDriver, type CasCells } from './casDriver';
import type { CasResult, Disposable, VersionedRecord } from './store';

/**
 * The file driver: correct across processes on one local filesystem, with nothing a dead process
 * can leave held.
 *
 * Node has no flock(2) without a native addon, and a lock file whose owner was killed is a mutex
 * that has to be broken — which cannot be done without a race. So this driver has no mutex at all.
 * Every cell (one lease or one container record) is a folder of revision files `<revision>.json`;
 * the current value is the highest revision. A write of revision N+1 prepares a temporary file and
 * publishes it with link(2), which fails atomically when N+1 already exists: exactly one writer wins
 * each revision, and a process killed at any instant leaves at worst a temporary file, never a
 * held lock. A writer that was paused long enough for revision N+1 to have been written and
 * pruned could still link it, so after publishing, the writer lists the folder and withdraws its
 * file if a higher revision exists (the highest revision is never pruned).
 *
 * Layout: `<root>/<sha256(namespace)>/<2 hex>/<cell digest>/<16-digit revision>.json`; folders 0700,
 * files 0600. The 256 two-hex-digit fan-out folders are the only shared structure (there are no
 * mutex files). Older revisions are pruned by the next writer; a released lease stays as a small
 * tombstone that keeps its fencing counter.
 */

const REVISION_FILE = /^(\d{16})\.json$/;
const TEMP_PREFIX = '.tmp-';
/** Revisions are bounded to keep records small; a record beyond this is treated as damaged. */
const MAX_RECORD_BYTES = 1024 * 1024;

class FileCells implements CasCells {
  private readonly root: string;
  private readonly namespaceDir: string;
  private prepared = false;

  constructor(rootPath: string, prefix: string) {
    this.root = rootPath;
    this.namespaceDir = path.join(rootPath, namespaceDigest(prefix));
  }

  async get(cell: string): Promise<VersionedRecord | null> {
    return this.readCurrent(this.cellDir(cell));
  }

  async put(cell: string, expectedRevision: string | null, value: unknown): Promise<CasResult> {
    const dir = this.cellDir(cell);
    const next = expectedRevision === null ? 1 : Number(expectedRevision) + 1;
    if (!Number.isSafeInteger(next) || next < 1) {
      throw new LockStorageError('file', 'A record revision is not a number; the store is damaged.');
    }
    const text = JSON.stringify(value);
    const temp = path.join(dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
    this.io(() => {
      try {
        fs.writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if (code(error) !== 'ENOENT') throw error;
        this.ensureDir(dir);
        fs.writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
      }
    });
    let won: boolean;
    try {
      won = this.io(() => {
        try {
          fs.linkSync(temp, revisionPath(dir, next));
          return true;
        } catch (error) {
          if (code(error) === 'EEXIST') return false;
          throw error;
        }
      });
    } finally {
      this.io(() => unlinkQuietly(temp));
    }
    if (!won) return { ok: false };

    // Withdraw a late write (see the module comment), then prune what no reader needs any more.
    const revisions = this.io(() => listRevisions(dir));
    const highest = revisions.length > 0 ? revisions[revisions.length - 1] : next;
    if (highest > next) {
      this.io(() => unlinkQuietly(revisionPath(dir, next)));
      return { ok: false };
    }
    this.io(() => {
      for (const revision of revisions) if (revision < next - 1) unlinkQuietly(revisionPath(dir, revision));
    });
    return { ok: true, revision: String(next) };
  }

  watch(cell: string, onChange: () => void): Disposable {
    const dir = this.cellDir(cell);
    this.io(() => this.ensureDir(dir));
    let pending: NodeJS.Timeout | undefined;
    const fire = () => {
      if (pending) return;
      pending = setTimeout(() => { pending = undefined; onChange(); }, 20);
    };
    const watcher = fs.watch(dir, { persistent: false }, fire);
    watcher.on('error', () => undefined);
    return {
      dispose: () => {
        watcher.close();
        if (pending) clearTimeout(pending);
      },
    };
  }

  async close(): Promise<void> {
    // Nothing is held open between operations.
  }

  private cellDir(cell: string): string {
    if (!this.prepared) this.prepare();
    return path.join(this.namespaceDir, cell.slice(1, 3), cell);
  }

  /** First use: check the storage root once (absolute, no symbolic link in it or above it). */
  private prepare(): void {
    this.io(() => {
      fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
      const real = fs.realpathSync(this.root);
      if (real !== path.resolve(this.root)) {
        throw new LockConfigurationError(
          'The storage path, or a folder above it, is a symbolic link; give the real path so that other users cannot redirect lock files.',
          { setting: 'path' });
      }
      fs.mkdirSync(this.namespaceDir, { recursive: true, mode: 0o700 });
    });
    this.prepared = true;
  }

  private ensureDir(dir: string): void {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private readCurrent(dir: string): VersionedRecord | null {
    for (let attempt = 0; attempt < 100; attempt++) {
      const revisions = this.io(() => listRevisions(dir));
      if (revisions.length === 0) return null;
      const revision = revisions[revisions.length - 1];
      let text: string;
      try {
        text = this.io(() => {
          const stat = fs.statSync(revisionPath(dir, revision));
          if (stat.size > MAX_RECORD_BYTES) throw damaged();
          return fs.readFileSync(revisionPath(dir, revision), 'utf8');
        });
      } catch (error) {
        if (error instanceof LockBackendError && code(error.cause) === 'ENOENT') continue; // pruned under us: list again
        throw error;
      }
      try {
        return { value: JSON.parse(text), revision: String(revision) };
      } catch (cause) {
        throw damaged(cause);
      }
    }
    throw new LockBackendError('file', 'The record kept changing while being read; try again.');
  }

  /** Runs filesystem work, turning unexpected I/O failures into a typed backend error. */
  private io<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof LockConfigurationError || error instanceof LockStorageError || error instanceof LockBackendError) throw error;
      const errno = code(error);
      throw new LockBackendError('file',
        `The lock storage folder could not be used (${errno ?? 'I/O error'}); check that it exists, is writable by this user and is on a local filesystem.`,
        { cause: error, retryable: errno === 'EMFILE' || errno === 'ENFILE' || errno === 'EAGAIN' || errno === 'ENOENT' });
    }
  }
}

function damaged(cause?: unknown): LockStorageError {
  return new LockStorageError('file',
    'A lock record file is damaged, so the lock cannot be treated as free. Stop the processes using this namespace and remove its folder (see the README on clean-up).',
    cause === undefined ? {} : { cause });
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

/** A temporary file left by a process that died between writing and publishing it. */
function removeOrphanTemp(dir: string, name: string): void {
  const pid = Number(name.slice(TEMP_PREFIX.length).split('-')[0]);
  if (!Number.isInteger(pid) || pid === process.pid) return;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (code(error) === 'ESRCH') unlinkQuietly(path.join(dir, name));
  }
}

function revisionPath(dir: string, revision: number): string {
  return path.join(dir, `${String(revision).padStart(16, '0')}.json`);
}

function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
  }
}

function code(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

export function createFileDriver(config: Pick<ResolvedConfig, 'path' | 'prefix'>): CasDriver {
  return new CasDriver('file', false, new FileCells(config.path, config.prefix));
}
