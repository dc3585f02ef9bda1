import * as fs from 'node:fs';
import { callSafely } from './callSafely';
import type { Watch } from './store';

/** What this file uses of a folder's watch (an fs.FSWatcher). */
export interface DirWatch {
  on(event: 'error', listener: (error: Error) => void): unknown;
  close(): void;
}

/** Opens a folder's file-system watch (fs.watch; tests pass one that fails on demand). */
export type OpenDirWatch = (dir: string, onEvent: () => void) => DirWatch;

const openFsWatch: OpenDirWatch = (dir, onEvent) => fs.watch(dir, { persistent: false }, onEvent);

/**
 * The file driver's change events for one record's folder: a file-system watch, its bursts of
 * events merged into one call 20 ms after the first. The watch states its health (`live`): a watch
 * that fails (its folder removed, the watch limit reached) is down for good — it calls `onHealth(false)`
 * and then `onChange` once, so its owner reads at once and re-reads at its own pace until it starts
 * a new watch (which it then reads once, as after any start).
 */
export function watchDir(
  dir: string,
  onChange: () => void,
  onHealth?: (healthy: boolean) => void,
  open: OpenDirWatch = openFsWatch,
): Watch {
  let pending: NodeJS.Timeout | undefined;
  let healthy = true;
  let disposed = false;
  const fire = () => {
    if (pending || disposed) return;
    pending = setTimeout(() => {
      pending = undefined;
      if (!disposed) onChange();
    }, 20);
  };
  const watcher = open(dir, fire);
  watcher.on('error', () => {
    if (disposed || !healthy) return;
    healthy = false;
    watcher.close();
    if (pending) clearTimeout(pending);
    pending = undefined;
    callSafely(() => onHealth?.(false));
    callSafely(onChange);
  });
  return {
    get live() {
      return { via: 'file watch' as const, healthy, recovers: false };
    },
    dispose: () => {
      disposed = true;
      watcher.close();
      if (pending) clearTimeout(pending);
    },
  };
}
