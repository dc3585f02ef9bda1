import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockConfigurationError } from '../errors';
import type { GitCommand } from '../git/runner';

/**
 * `verify --witness FILE` trusts FILE as the last page an earlier run of the check proved: the steps up
 * to it are not judged again. It must come from the check's own cache, never from the change under
 * check. GitLab caches only paths inside the checkout, where a commit could carry a witness of its own
 * that the check would read whenever the cache has no entry: a witness the checkout tracks (the file,
 * anything under it, or a file or link in the way of its folders) is refused before anything is read.
 */
export async function refuseTrackedWitness(git: GitCommand, root: string, witness: string): Promise<void> {
  const relative = path.relative(realRoot(root), realPath(witness));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
  const parts = relative.split(path.sep);
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  const whole = prefixes[prefixes.length - 1];
  const listed = (await git.raw(['ls-files', '-z', '--', ...prefixes.map(p => `:(literal)${p}`)])).split('\0').filter(Boolean);
  if (listed.some(entry => prefixes.includes(entry) || entry.startsWith(`${whole}/`))) {
    throw new LockConfigurationError(
      `The --witness file ${whole} is tracked by the commit under check: a witness must come from the check's own cache, never from the change it checks. Keep it outside the checkout, or at a path no commit has.`,
      { setting: 'witness' },
    );
  }
}

function realRoot(root: string): string {
  try {
    return fs.realpathSync(root);
  } catch {
    return root;
  }
}

/** The path with its longest existing ancestor resolved (links included), so that it compares with the root's. */
function realPath(file: string): string {
  const rest: string[] = [];
  let at = path.resolve(file);
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), ...rest.reverse());
    } catch {
      const parent = path.dirname(at);
      if (parent === at) return path.resolve(file);
      rest.push(path.basename(at));
      at = parent;
    }
  }
}
