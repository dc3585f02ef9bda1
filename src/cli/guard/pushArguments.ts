import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * The command line of the git process whose pre-push hook runs the guard: its process id comes
 * from the hook script ($PPID). Which of the words are the push's own is git's reading
 * (src/core/guard/pushCommandLine.ts).
 *
 * - Linux: /proc/PID/cmdline, exact.
 * - macOS and other systems without /proc: `ps -o args= -p PID`, which joins the arguments with
 *   spaces: an argument holding a space is read as several words (git push's own options never
 *   hold one; a push option's value may).
 * - Windows: neither exists for git.exe as Git for Windows' sh sees it, so the command line is not
 *   shown. Lockstep's own push (`release --push`, Push and Release in VS Code) says its arguments in
 *   {@link ANNOUNCED_ARGUMENTS}; for any other push the guard cannot see `--signed`,
 *   `--recurse-submodules` or `-o`, and a push that would carry the proof is refused (prePush.ts).
 */

/** Set by Lockstep's own `git push` (container/push.ts): its argv as JSON, for systems that do not show it. */
export const ANNOUNCED_ARGUMENTS = 'LOCKSTEP_PUSH_ARGUMENTS';

export interface ProcessReading {
  readonly platform: NodeJS.Platform;
  /** The text of /proc/PID/cmdline; throws where there is none. */
  readProc(pid: string): string;
  /** The output of `ps -o args= -p PID`; throws where ps fails. */
  runPs(pid: string): string;
}

const systemReading: ProcessReading = {
  platform: process.platform,
  readProc: pid => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
  runPs: pid => execFileSync('ps', ['-o', 'args=', '-p', pid], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] }),
};

export function gitProcessArguments(pid: string | undefined, reading: ProcessReading = systemReading): string[] | undefined {
  if (pid === undefined || !/^\d+$/.test(pid) || reading.platform === 'win32') return undefined;
  if (reading.platform === 'linux') {
    try {
      return reading.readProc(pid).split('\0').slice(0, -1);
    } catch {
      // no /proc mounted (a container without it): ask ps, as on macOS
    }
  }
  try {
    const words = reading.runPs(pid).trim().split(/\s+/);
    return words.length > 0 && words[0] !== '' ? words : undefined;
  } catch {
    return undefined;
  }
}

/** The arguments Lockstep's own push announced, when they are a JSON list of strings. */
export function announcedArguments(env: Readonly<Record<string, string | undefined>>): string[] | undefined {
  const text = env[ANNOUNCED_ARGUMENTS];
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every(v => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Windows: a push whose command line nobody showed (not Lockstep's own) and that would carry the
 * proof is refused — the guard cannot rule out `--signed` or `--recurse-submodules` there, which
 * would hand the proof to a push certificate or to the submodules' remotes. Fail closed, and say
 * how to land. Elsewhere an unseen command line (a guard run by hand) is judged by configuration.
 */
export function unseenCommandLine(platform: NodeJS.Platform, argv: readonly string[] | undefined): string | undefined {
  if (platform !== 'win32' || argv !== undefined) return undefined;
  return (
    "On Windows Lockstep cannot read this git push's command line, so it cannot rule out --signed or --recurse-submodules, which would hand the proof of your lock to a push certificate or to submodules. " +
    'Land with lockstep release --push, or Lockstep: Push and Release in VS Code, which tell the guard their arguments; push other branches without the proof: git -c push.pushOption= push …'
  );
}
