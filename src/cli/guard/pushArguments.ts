import * as fs from 'node:fs';

/**
 * The arguments of the `git push` whose pre-push hook runs the guard: its process id comes from the
 * hook script ($PPID), its arguments from /proc (Linux). Empty where the system does not show them;
 * the guard then judges by the configuration alone.
 */
export function pushArguments(pid: string | undefined): string[] {
  if (pid === undefined || !/^\d+$/.test(pid)) return [];
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const at = argv.findIndex(a => a === 'push' || a === 'git-push' || a.endsWith('/git-push'));
    return at < 0 ? [] : argv.slice(at + 1);
  } catch {
    return [];
  }
}
