import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { LockBackendError, LockConfigurationError, LockStorageError } from '../errors';

/** The file driver's small file-system helpers, shared by its revision folders and its slot logs. */

/** Temporary files start with this, then the writer's process id: `.tmp-<pid>-<nonce>`. */
export const TEMP_PREFIX = '.tmp-';
/** Read once: `process.pid` costs a system call each time. */
export const PID = process.pid;

/** Runs filesystem work, turning unexpected I/O failures into a typed backend error. */
export function fileIo<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof LockConfigurationError || error instanceof LockStorageError || error instanceof LockBackendError) throw error;
    const errno = code(error);
    throw new LockBackendError(
      'file',
      `The lock storage folder could not be used (${errno ?? 'I/O error'}); check that it exists, is writable by this user and is on a local filesystem.`,
      { cause: withoutPath(error), retryable: errno === 'EMFILE' || errno === 'ENFILE' || errno === 'EAGAIN' || errno === 'ENOENT' },
    );
  }
}

/**
 * A stored file that does not read as this driver wrote it. `what` says what was wrong, in words
 * that hold no record content (a parse error's message would quote the file: names, owner hashes).
 */
export function damaged(what = 'a record that does not read as this driver wrote it'): LockStorageError {
  return new LockStorageError(
    'file',
    `A lock record file is damaged (${what}), so the lock cannot be treated as free. Stop the processes using this namespace,` +
      ' then restore its folder from a backup or remove it (see the README on damaged records and clean-up).',
  );
}

/** A 12-hex nonce: unique among concurrent writers (randomUUID draws from a cached random pool). */
export function newNonce(): string {
  return randomUUID().slice(0, 8) + randomUUID().slice(9, 13);
}

/**
 * The evidence of a failed system call without its path: paths hold namespace and key digests,
 * which errors never carry (docs/leases.md#errors).
 */
function withoutPath(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { code: errno, syscall } = error as NodeJS.ErrnoException;
  return Object.assign(new Error(`${syscall ?? 'file system call'} failed: ${errno ?? error.name}`), { code: errno, syscall });
}

/** A temporary file left by a process that died between writing and publishing it. */
export function removeOrphanTemp(dir: string, name: string): void {
  const pid = Number(name.slice(TEMP_PREFIX.length).split('-')[0]);
  if (!Number.isInteger(pid) || pid === PID) return;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (code(error) === 'ESRCH') unlinkQuietly(path.join(dir, name));
  }
}

export function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
  }
}

export function code(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/**
 * Writes `text` to a new private temporary file in `dir` (`.tmp-<pid>-<nonce>`, 0600), creating the
 * folder when it is missing; returns its path and its stat, ready to be published with link(2).
 */
export function writeTempFile(dir: string, text: string, ensureDir: (dir: string) => void): { temp: string; stat: fs.Stats } {
  const temp = path.join(dir, `${TEMP_PREFIX}${PID}-${newNonce()}`);
  let fd: number;
  try {
    fd = fs.openSync(temp, 'wx', 0o600);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error;
    ensureDir(dir);
    fd = fs.openSync(temp, 'wx', 0o600);
  }
  try {
    fs.writeSync(fd, text);
    return { temp, stat: fs.fstatSync(fd) };
  } finally {
    fs.closeSync(fd);
  }
}
