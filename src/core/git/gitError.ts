import { LockBackendError, LockConfigurationError } from '../errors';

/**
 * The one typed error of a git command that did not succeed. Its message says what went wrong in
 * Lockstep's words and what to do; it never quotes git's output, which can hold a remote URL with
 * credentials and ref names (raw backend keys). git's exit code is a field, and its stderr, with
 * credentials and object names removed, is the cause (for logs and `--verbose`-style debugging).
 *
 * A GitError is a backend error (exit 4: the remote, the network, a refusal). Where git's answer
 * means a setting is wrong — the folder is no repository, git is not installed — the runner
 * rejects with a {@link LockConfigurationError} (exit 2) whose cause is the GitError.
 */

export type GitFailureKind =
  /** The remote does not exist (or this account may not see it). */
  | 'remote-not-found'
  /** The remote refused the credentials, or none were available without a prompt. */
  | 'credentials'
  /** The remote could not be reached (DNS, connection, TLS). */
  | 'unreachable'
  /** The command ran longer than its time limit and was stopped. */
  | 'timeout'
  /** Anything else: a query whose answer is "no" (`merge-base --is-ancestor`), a missing object, a refused push. */
  | 'failed';

export class GitError extends LockBackendError {
  /** git's exit code; null when it was stopped by a signal (a time limit). */
  readonly exitCode: number | null;
  /** The git subcommand that failed (`fetch`, `ls-remote`, …): never a value from settings. */
  readonly subcommand: string;
  readonly kind: GitFailureKind;

  constructor(kind: GitFailureKind, subcommand: string, exitCode: number | null, message: string, stderr: string) {
    super('git', message, {
      cause: new Error(`git ${subcommand} exited ${exitCode ?? 'on a signal'}: ${redact(stderr)}`),
      retryable: kind !== 'failed',
    });
    this.name = 'GitError';
    this.kind = kind;
    this.subcommand = subcommand;
    this.exitCode = exitCode;
  }
}

/** What a git run left behind: enough to type its failure. */
export interface FailedGit {
  readonly code: number;
  readonly stderr: string;
}

/**
 * The typed error for a git command that exited non-zero: a {@link GitError}, or a
 * {@link LockConfigurationError} caused by one when git says the folder is no repository.
 */
export function failure(output: FailedGit, subcommand: string): GitError | LockConfigurationError {
  const text = output.stderr;
  const error = (kind: GitFailureKind, message: string) => new GitError(kind, subcommand, output.code, message, text);
  if (/not a git repository \(or any|cannot change to/i.test(text)) {
    return new LockConfigurationError(
      'The folder is not a git clone: Lockstep runs in a local clone of the repository whose remote is shared (or, for the server guard, in the shared bare repository).',
      { setting: 'gitDir', cause: error('failed', 'git could not open the repository.') },
    );
  }
  if (/does not appear to be a git repository|repository .* not found|No such device or address/i.test(text)) {
    return error(
      'remote-not-found',
      'The git remote was not found; check the remote named in .lockstep.json (a remote of this clone, see `git remote -v`) and that the repository exists.',
    );
  }
  if (/Authentication failed|Permission denied|could not read Username|terminal prompts disabled|\b40[13]\b/i.test(text)) {
    return error(
      'credentials',
      'The git remote refused the credentials (or none were available without a prompt); set up your git credentials for this remote (credential helper or ssh key).',
    );
  }
  if (
    /Could not resolve host|Connection refused|Connection timed out|Network is unreachable|Failed to connect|unable to access|Could not read from remote/i.test(
      text,
    )
  ) {
    return error('unreachable', 'The git remote is unreachable; check the network and the remote named in .lockstep.json, then try again.');
  }
  if (/transport '[^']*' not allowed|unsupported protocol|protocol .* is not supported/i.test(text)) {
    return new LockConfigurationError(
      "git refused the remote's transport: Lockstep talks to the shared remote over file, git, ssh, http or https only (never ext:: or another helper). Point the remote at such a URL.",
      { setting: 'remote', cause: error('failed', 'git refused the transport.') },
    );
  }
  return error('failed', `git ${subcommand} failed (exit ${output.code}); run \`git fetch\` in the clone to see why.`);
}

/** Removes credentials from URLs and full object names / digests (ref names are backend keys). */
export function redact(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@').replace(/\b[0-9a-f]{40,64}\b/gi, '…');
}
