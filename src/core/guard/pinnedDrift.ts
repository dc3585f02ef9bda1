import { CONTAINER_FILE, MAX_CONTAINER_FILE_BYTES, parseContainerFile, type ContainerFile } from '../container/containerFile';
import { LockError } from '../errors';
import type { GitCommand } from '../git/runner';
import type { ServerSettings } from './serverSettings';

/**
 * Whether the server guard's pinned settings went stale: the guard decides only with what
 * `hooks install --server` pinned, so after `.lockstep.json` changes on the pinned branch (a new
 * protected branch, another operator, another store) it keeps deciding with the old settings until
 * the install runs again. `doctor`, `hooks status --server` and the guard itself (a warning line to
 * the pusher, never a change of its decision) say so.
 */

/** The settings the guard decides with, compared: which lock page, what is fenced, who may clear, the durations. */
const COMPARED: readonly (keyof ContainerFile)[] = [
  'container',
  'driver',
  'prefix',
  'path',
  'redisUrl',
  'databaseUrl',
  'gitRemote',
  'protectedBranches',
  'operators',
  'leaseTtlSeconds',
  'heartbeatSeconds',
  'windowSeconds',
  'serverGuard',
];

/** The names of the settings in which `committed` differs from `pinned` (lists compared as sets). */
export function pinnedDrift(pinned: ContainerFile, committed: ContainerFile): string[] {
  const same = (a: unknown, b: unknown): boolean =>
    Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every(x => b.includes(x)) : a === b;
  return COMPARED.filter(key => !same(pinned[key], committed[key]));
}

/**
 * A warning when the pinned branch's committed `.lockstep.json` (in this bare repository, as it is
 * now) differs from the pinned settings, or can no longer be read; undefined when they agree. Names
 * the settings, never their values.
 */
export async function pinnedDriftWarning(git: GitCommand, settings: ServerSettings): Promise<string | undefined> {
  const branch = settings.pinnedFrom.branch;
  const again =
    'it decides with the pinned ones until an administrator runs lockstep hooks install --server in the shared repository again.';
  const entry = (await git.raw(['ls-tree', '-l', `refs/heads/${branch}`, '--', CONTAINER_FILE]).catch(() => '')).trim();
  if (entry === '')
    return `${branch} has no ${CONTAINER_FILE} now (the server guard pinned it at ${settings.pinnedFrom.commit.slice(0, 12)}); ${again}`;
  const [mode, , id, size] = entry.split(/\s+/);
  let committed: ContainerFile;
  try {
    if (mode !== '100644' && mode !== '100755') throw new Error('not a regular file');
    if (!(Number(size) <= MAX_CONTAINER_FILE_BYTES)) throw new Error('too large');
    committed = parseContainerFile(await git.raw(['cat-file', 'blob', id ?? '']));
  } catch (error) {
    const why =
      error instanceof LockError ? error.message : `${CONTAINER_FILE} is ${error instanceof Error ? error.message : 'unreadable'}`;
    return `The server guard's pinned settings may be stale: ${CONTAINER_FILE} on ${branch} cannot be read as settings (${why}); ${again}`;
  }
  const changed = pinnedDrift(settings.file, committed);
  if (changed.length === 0) return undefined;
  return `The server guard's pinned settings are stale: ${CONTAINER_FILE} on ${branch} differs from them in ${changed.join(', ')}; ${again}`;
}
