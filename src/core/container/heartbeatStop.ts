import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionDir } from './session';

/**
 * The stop file of a clone's `heartbeat --every` loop: `.git/lockstep/heartbeat.stop`, written by
 * `lockstep heartbeat --stop`. It is how the loop is ended where SIGTERM is never delivered
 * (Windows: `taskkill` and a closed console give the process no signal it can catch), and it works
 * the same on every system. The loop watches the folder (and looks again at each renewal, should a
 * file-system watch miss an event), removes the file and ends with exit 0 without releasing: the
 * lease then runs to its expiry, as after Ctrl-C.
 */
const STOP = 'heartbeat.stop';

export function heartbeatStopFile(gitDir: string): string {
  return path.join(sessionDir(gitDir), STOP);
}

/** Asks the clone's running heartbeat loop, if any, to stop. It holds no token: an empty file. */
export function requestHeartbeatStop(gitDir: string): void {
  fs.mkdirSync(sessionDir(gitDir), { recursive: true, mode: 0o700 });
  fs.writeFileSync(heartbeatStopFile(gitDir), '');
}

export function heartbeatStopRequested(gitDir: string): boolean {
  return fs.existsSync(heartbeatStopFile(gitDir));
}

export function clearHeartbeatStop(gitDir: string): void {
  fs.rmSync(heartbeatStopFile(gitDir), { force: true });
}

/**
 * Calls `onChange` whenever something changes in the clone's `.git/lockstep/` (the stop file
 * appears, the session goes at a release). The caller decides what the change means; a watch that
 * cannot be set up (a file system without notifications) leaves the caller's own ticks to notice.
 */
export function watchLockstepFolder(gitDir: string, onChange: () => void): { dispose(): void } {
  const dir = sessionDir(gitDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { persistent: false }, () => onChange());
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  return { dispose: () => watcher?.close() };
}
