import {
  auditLogText,
  GitError,
  type GitOutput,
  GitRefs,
  GitRunner,
  type GitRunOptions,
  keptEntries,
  MAX_RECORD_BYTES,
  type OpenpgpListingText,
  type PushedCommit,
  readOpenpgpListing,
  SNAPSHOT_TRAILER,
  type StepSignature,
  stepSignature,
  withSignersFile,
} from '../../core/application';

/**
 * The shared bare repository as the server's guard reads it, during a push. git runs are given only
 * what git handed the hook (the quarantine of the pushed objects) and the pinned PATH, never the
 * rest of the pusher's environment, and their exit codes are read as exit codes. A commit is read
 * as git reads it: git names its parents (no header parsing of our own), and no replacement ref
 * (`refs/replace/`, which a pusher may create) changes what a commit is.
 */

/** What a pushed file of the lock ref holds: its text, none, or more bytes than any reader reads. */
export type PushedFile = { readonly text: string } | 'absent' | 'too large';

/** What of the hook's environment git itself needs to see the objects being pushed. */
const QUARANTINE_VARIABLES = ['GIT_QUARANTINE_PATH', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES'];

export class ServerRepo {
  private readonly runner: GitRunner;
  private readonly refs: GitRefs;

  constructor(repo: string, hookEnv: Readonly<Record<string, string | undefined>>) {
    const env: NodeJS.ProcessEnv = { PATH: hookEnv.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', GIT_NO_REPLACE_OBJECTS: '1' };
    for (const name of QUARANTINE_VARIABLES) if (hookEnv[name]) env[name] = hookEnv[name];
    this.runner = new GitRunner({ gitDir: repo, timeoutMs: 30_000, baseEnv: env });
    this.refs = new GitRefs(this.runner, '.');
  }

  /** The one git runner of this push (the quarantine, the pinned PATH, no replacement refs): the guard's other reads share it. */
  get git(): GitRunner {
    return this.runner;
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

  /**
   * Whether the repository's refs live on a case-insensitive filesystem: git sets `core.ignorecase`
   * when it creates a repository there (macOS, Windows). Unset is false; a value git cannot read refuses.
   */
  async foldsCase(): Promise<boolean> {
    const output = await this.runner.run(['config', '--bool', '--get', 'core.ignorecase']);
    if (output.code === 1) return false;
    if (output.code === 0) return output.stdout.toString('utf8').trim() === 'true';
    throw unreadable('config', output);
  }

  /**
   * A pushed commit's parents (as git reads them: `git rev-list --parents`), files, snapshot trailer
   * and raw text; undefined when it is not a commit. A tree entry that is not a regular file is
   * named with its mode, so that no rule mistakes it for the file of that name.
   */
  async commit(sha: string): Promise<(PushedCommit & { readonly text: string }) | undefined> {
    const type = await this.runner.run(['cat-file', '-t', '--end-of-options', sha]);
    if (type.code !== 0 || type.stdout.toString('utf8').trim() !== 'commit') return undefined;
    const [self, ...parents] = (await this.ok(['rev-list', '--parents', '--max-count=1', '--end-of-options', sha, '--'])).trim().split(' ');
    if (self !== sha)
      throw new GitError('failed', 'rev-list', 0, `The server's guard could not read a pushed commit's parents; the push is refused.`, '');
    const text = await this.ok(['cat-file', 'commit', '--end-of-options', sha]);
    const body = text.indexOf('\n\n');
    const snapshot = body >= 0 && new RegExp(`^${SNAPSHOT_TRAILER}:`, 'm').test(text.slice(body));
    const files = (await this.ok(['ls-tree', '-z', '--end-of-options', sha]))
      .split('\0')
      .filter(Boolean)
      .map(entry => {
        const [meta, name] = [entry.slice(0, entry.indexOf('\t')), entry.slice(entry.indexOf('\t') + 1)];
        return meta.startsWith('100644 blob ') ? name : `${name} (mode ${meta.split(' ')[0]})`;
      });
    return { parents, files, snapshot, text };
  }

  /**
   * A file of a commit, read only after git said it is a blob of at most `maxBytes` (for records,
   * every reader's cap {@link MAX_RECORD_BYTES}): a larger one is never read into memory.
   */
  async file(sha: string, name: string, maxBytes = MAX_RECORD_BYTES): Promise<PushedFile> {
    const check = await this.runner.run(['cat-file', '--batch-check'], { input: `${sha}:${name}\n` });
    const match = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(check.stdout.toString('utf8').trim());
    if (check.code !== 0 || match === null || match[2] !== 'blob') return 'absent';
    if (Number(match[3]) > maxBytes) return 'too large';
    return { text: await this.ok(['cat-file', 'blob', '--end-of-options', match[1]]) };
  }

  /**
   * What git says of a pushed commit's signature, verified against the allowed signers text and, where
   * the pinned settings list OpenPGP signers, a keyring holding only the listed keys (signedStep.ts,
   * openpgpSigners.ts).
   */
  async signature(sha: string, allowedSigners: string, openpgp?: OpenpgpListingText): Promise<StepSignature> {
    const listing = openpgp === undefined ? undefined : readOpenpgpListing(openpgp);
    const out = await withSignersFile(
      allowedSigners,
      (file, env) =>
        this.ok(
          ['-c', `gpg.ssh.allowedSignersFile=${file}`, 'log', '--max-count=1', '--format=%G?%x1f%GS%x1f%GP', '--end-of-options', sha, '--'],
          { env },
        ),
      listing?.keyring,
    );
    const [status = 'N', signer = '', primaryKey = ''] = out.trim().split('\x1f');
    return stepSignature({ status, signer, primaryKey }, listing?.signers);
  }

  /** What a compaction of the history ending at `sha` must write as its audit.log: its newest entries (AUDIT_LOG_KEEP). */
  async auditLogOf(sha: string): Promise<string> {
    return auditLogText(await keptEntries(this.refs, sha));
  }

  private async ok(args: readonly string[], options: GitRunOptions = {}): Promise<string> {
    const output: GitOutput = await this.runner.run(args, options);
    if (output.code !== 0) throw unreadable(args[0], output);
    return output.stdout.toString('utf8');
  }
}

/** A git query of the guard failed: the push is refused (never read as "nothing to check"). */
function unreadable(subcommand: string, output: GitOutput): GitError {
  return new GitError(
    'failed',
    subcommand,
    output.code,
    `The server's guard could not read the repository (git ${subcommand} exited ${output.code}); the push is refused.`,
    output.stderr,
  );
}
