import * as fs from 'node:fs';
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
