import { auditLogText, historyEntries } from '../../core/stores/git/auditHistory';
import { GitError } from '../../core/git/gitError';
import { GitRunner, type GitOutput } from '../../core/git/runner';
import { GitRefs, SNAPSHOT_TRAILER } from '../../core/stores/git/gitRefs';
import type { PushedCommit } from '../../core/guard/recordHistory';

/**
 * The shared bare repository as the server's guard reads it, during a push. git runs are given only
 * what git handed the hook (the quarantine of the pushed objects) and the pinned PATH, never the
 * rest of the pusher's environment, and their exit codes are read as exit codes.
 */

/** What of the hook's environment git itself needs to see the objects being pushed. */
const QUARANTINE_VARIABLES = ['GIT_QUARANTINE_PATH', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES'];

export class ServerRepo {
  private readonly runner: GitRunner;
  private readonly refs: GitRefs;

  constructor(repo: string, hookEnv: Readonly<Record<string, string | undefined>>) {
    const env: NodeJS.ProcessEnv = { PATH: hookEnv.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
    for (const name of QUARANTINE_VARIABLES) if (hookEnv[name]) env[name] = hookEnv[name];
    this.runner = new GitRunner({ gitDir: repo, timeoutMs: 30_000, baseEnv: env });
    this.refs = new GitRefs(this.runner, '.');
  }

  /**
   * Where the server's symbolic refs lead a pushed ref name (`refs/heads/trunk → refs/heads/main`),
   * also when the target does not exist yet (a push to such an alias creates the target); the name
   * itself when it is not symbolic. `git for-each-ref` lists no such dangling alias, so each pushed
   * name is asked on its own.
   */
  async resolveRef(ref: string): Promise<string> {
    const output = await this.runner.run(['symbolic-ref', '-q', '--end-of-options', ref]);
    if (output.code === 0) return output.stdout.toString('utf8').trim() || ref;
    if (output.code === 1) return ref;
    throw unreadable('symbolic-ref', output);
  }

  /** A pushed commit's parents, files and snapshot trailer; undefined when it is not a commit. */
  async commit(sha: string): Promise<PushedCommit | undefined> {
    const type = await this.runner.run(['cat-file', '-t', '--end-of-options', sha]);
    if (type.code !== 0 || type.stdout.toString('utf8').trim() !== 'commit') return undefined;
    const text = await this.ok(['cat-file', 'commit', '--end-of-options', sha]);
    const header = text.slice(0, text.indexOf('\n\n') < 0 ? text.length : text.indexOf('\n\n'));
    const parents = header.split('\n').filter(l => l.startsWith('parent ')).map(l => l.slice('parent '.length).trim());
    const message = text.slice(header.length);
    const snapshot = new RegExp(`^${SNAPSHOT_TRAILER}:`, 'm').test(message);
    const tree = await this.ok(['ls-tree', '--name-only', '-z', '--end-of-options', sha]);
    return { parents, files: tree.split('\0').filter(Boolean), snapshot };
  }

  /** A file of a commit as text; null when the commit has no such file. */
  file(sha: string, name: string): Promise<string | null> {
    return this.refs.readFile(sha, name);
  }

  /** What a compaction of the history ending at `sha` must write as its audit.log. */
  async auditLogOf(sha: string): Promise<string> {
    return auditLogText(await historyEntries(this.refs, sha));
  }

  private async ok(args: readonly string[]): Promise<string> {
    const output: GitOutput = await this.runner.run(args);
    if (output.code !== 0) throw unreadable(args[0], output);
    return output.stdout.toString('utf8');
  }
}

/** A git query of the guard failed: the push is refused (never read as "nothing to check"). */
function unreadable(subcommand: string, output: GitOutput): GitError {
  return new GitError('failed', subcommand, output.code,
    `The server's guard could not read the repository (git ${subcommand} exited ${output.code}); the push is refused.`, output.stderr);
}
