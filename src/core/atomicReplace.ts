import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockBackendError } from './errors';

/**
 * The last step of every atomic replace (write a temporary file, then rename it over the old one):
 * session.json, pending.json, push.config, witnesses, checkpoints, the server's pinned settings. On
 * Windows a rename over a file that another program holds open (the search indexer, an antivirus,
 * a backup or sync tool, VS Code's own file watcher) fails for a moment with EPERM, EBUSY or
 * EACCES; it is retried a few times with a short, growing pause, as graceful-fs does for npm. On
 * other systems those errors mean what they say and are not retried.
 */

/** Pauses between tries (ms): about a second in all. */
export const REPLACE_PAUSES_MS: readonly number[] = [10, 20, 40, 80, 160, 320, 400];
const TRANSIENT_ON_WINDOWS = new Set(['EPERM', 'EBUSY', 'EACCES']);

export interface ReplaceIo {
  readonly platform: NodeJS.Platform;
  rename(from: string, to: string): void;
  /** Blocks for `ms` (the callers are synchronous). */
  sleep(ms: number): void;
  /** Removes the temporary file once the replace has failed for good. */
  discard(file: string): void;
}

const systemIo: ReplaceIo = {
  platform: process.platform,
  rename: (from, to) => fs.renameSync(from, to),
  sleep: ms => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms),
  discard: file => fs.rmSync(file, { force: true }),
};

/** A file that another program kept open through every try: what it was, and what to do. */
export class LockFileInUseError extends LockBackendError {
  constructor(what: string, cause: unknown) {
    super(
      'local',
      `${what} could not be replaced: another program kept it open through ${REPLACE_PAUSES_MS.length + 1} tries over about a second ` +
        '(on Windows often the search indexer, an antivirus, or a backup or sync tool). Exclude the folder from that program, or close it, then run the command again.',
      { cause, retryable: true },
    );
    this.name = 'LockFileInUseError';
  }
}

/**
 * Renames `temp` over `file`. `what` names the file for the error, in words that hold no secret
 * (e.g. "The clone's session file .git/lockstep/session.json").
 */
export function replaceAtomically(temp: string, file: string, what: string, io: ReplaceIo = systemIo): void {
  for (let attempt = 0; ; attempt++) {
    try {
      io.rename(temp, file);
      return;
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException).code ?? '';
      if (io.platform !== 'win32' || !TRANSIENT_ON_WINDOWS.has(errno)) throw error;
      if (attempt >= REPLACE_PAUSES_MS.length) {
        io.discard(temp);
        // The cause keeps the code only: Node's message names the file's path.
        throw new LockFileInUseError(what, Object.assign(new Error(`rename failed with ${errno}`), { code: errno }));
      }
      io.sleep(REPLACE_PAUSES_MS[attempt]);
    }
  }
}

export interface AtomicWriteOptions {
  /** The file's mode (default 0600: every such file of a clone is private). */
  readonly mode?: number;
  /**
   * Flushed to the disk before the rename, and the rename with its folder: for a file whose loss on a
   * power cut would lose something no other place holds (the owner token of a session or a pending
   * acquire). Costs a few milliseconds; the other files are rebuilt from the page or the history.
   */
  readonly durable?: boolean;
}

/** The temporary file a writer uses beside `file`: `<name>.<pid>.tmp`. */
const TEMP_NAME = /\.(\d{1,10})\.tmp$/;
/** A temporary file this old whose writer is gone was left by a kill between its write and its rename. */
const ORPHAN_AGE_MS = 60_000;

/**
 * Writes `text` to `file` atomically: a temporary file beside it, then `replaceAtomically`, so a reader
 * sees the old file or the new one, never half of one. A failure removes the temporary file; one left by
 * a process killed between the two steps is removed by `removeOrphanTemps`.
 */
export function writeFileAtomically(file: string, text: string, what: string, options: AtomicWriteOptions = {}): void {
  const temp = writeTemp(file, text, options.mode ?? 0o600, options.durable === true);
  try {
    replaceAtomically(temp, file, what);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  if (options.durable) syncFolder(path.dirname(file));
}

/** link(2) refused because the file system has no hard links. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Creates `file` with `text` only if it does not exist (a temporary file beside it, then link(2), which never
 * replaces): true when this call created it, false when a file was already there. Durable as
 * {@link writeFileAtomically} is with `durable`.
 */
export function createFileExclusively(
  file: string,
  text: string,
  mode = 0o600,
  link: (from: string, to: string) => void = fs.linkSync,
): boolean {
  const temp = writeTemp(file, text, mode, true);
  try {
    try {
      link(temp, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(code ?? '')) throw error;
      // A file system without hard links (FAT, some network shares): an exclusive create of the file itself,
      // never replacing either; a reader that meets it half written reads no pending acquire, never another's.
      try {
        fs.writeFileSync(file, text, { flag: 'wx', mode });
      } catch (created) {
        if ((created as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw created;
      }
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
  syncFolder(path.dirname(file));
  return true;
}

/** The temporary file beside `file` (`<name>.<pid>.tmp`), written whole; removed again when the write fails. */
function writeTemp(file: string, text: string, mode: number, durable: boolean): string {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    const fd = fs.openSync(temp, 'w', mode);
    try {
      // A temporary file left by an earlier process with this pid keeps its own mode.
      fs.fchmodSync(fd, mode);
      fs.writeSync(fd, text);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    try {
      fs.rmSync(temp, { force: true });
    } catch {
      // the folder itself is what failed: nothing was written there
    }
    throw error;
  }
  return temp;
}

/** The rename itself reaches the disk with its folder (not possible on Windows, where it is not needed). */
function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Removes the temporary files in `dir` that `writeFileAtomically` left behind: a writer killed between
 * its write and its rename. Only files older than a minute whose writer's process is gone, so a live
 * writer's file (even one in another process namespace sharing the folder) is never taken.
 */
export function removeOrphanTemps(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = TEMP_NAME.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    const file = path.join(dir, name);
    try {
      if (now - fs.lstatSync(file).mtimeMs > ORPHAN_AGE_MS) fs.rmSync(file, { force: true });
    } catch {
      // gone already, or not ours to remove: it is only left-over clutter
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
