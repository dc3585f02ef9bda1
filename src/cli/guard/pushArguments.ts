import * as fs from 'node:fs';

/**
 * The command line of the git process whose pre-push hook runs the guard: its process id comes
 * from the hook script ($PPID), its arguments from /proc (Linux). Undefined where the system does
 * not show them; the guard then judges by the configuration alone. Which of the words are the
 * push's own is git's reading (src/core/guard/pushCommandLine.ts).
 */
export function gitProcessArguments(pid: string | undefined): string[] | undefined {
  if (pid === undefined || !/^\d+$/.test(pid)) return undefined;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}
