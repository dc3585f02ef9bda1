import { GitRunner } from './stores/git/gitProcess';

/**
 * git in one folder of the user's (a clone, a bare remote): the user's environment and
 * configuration, no prompt, no time limit. Replaces simple-git, whose logging and colour-detection
 * dependencies every hook and command paid for at start-up, on the runner the git driver already has.
 */
export interface GitCommand {
  /**
   * Runs `git ARGS…` and resolves with its stdout; rejects with a {@link GitCommandError} whenever
   * git exits non-zero, with stderr or without it. (simple-git resolved a silent non-zero exit, so
   * `merge-base --is-ancestor` answering "no" read as "yes": a `--quiet` query's "no" is a rejection
   * here, and callers that ask one say what "no" means with `.catch`.)
   */
  raw(args: readonly string[]): Promise<string>;
}

/** A failed git command; its message is git's stderr (not shown to users as such: callers wrap it). */
export class GitCommandError extends Error {
  constructor(readonly exitCode: number, stderr: string) {
    super(stderr.trim() || `git exited ${exitCode}`);
    this.name = 'GitCommandError';
  }
}

export function gitIn(dir: string): GitCommand {
  const runner = new GitRunner({ gitDir: dir, baseEnv: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
  return {
    async raw(args) {
      const output = await runner.run(args);
      if (output.code !== 0) throw new GitCommandError(output.code, output.stderr);
      return output.stdout.toString('utf8');
    },
  };
}
