import { spawn } from 'node:child_process';
import { LockBackendError, LockConfigurationError } from '../errors';
import { failure, GitError } from './gitError';
import { type GitProgram, gitProgram } from './gitProgram';

/**
 * The one way Lockstep runs git — the git driver, the clone's queries, both guards, init, hooks
 * install, doctor. Not simple-git: every guarded push starts Node, and a wrapper library's load is
 * the user's wait; and one runner keeps one set of rules for every call: data on stdin (plumbing),
 * stdout *and* the exit code of a refused push (`--porcelain` reports the refusal on stdout with
 * exit 1), a controlled environment, a per-command timeout, a spawn counter for the benchmark, and
 * one typed error ({@link GitError}) for every non-zero exit. The user's own git configuration and
 * credential helpers apply; Lockstep never passes a credential.
 *
 * Values that came from settings (remote names, branch names, refs built from them) are always
 * placed after `--end-of-options` (or `--`) by the callers, so that no committed value is ever read
 * as an option; and every git run may use only the transports of a shared remote
 * ({@link ALLOWED_PROTOCOLS}: never `ext::` or another helper that runs a command).
 */

/** The transports a shared remote may use; git refuses any other (GIT_ALLOW_PROTOCOL) in every run. */
export const ALLOWED_PROTOCOLS: readonly string[] = ['file', 'git', 'ssh', 'http', 'https'];

export interface GitOutput {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export interface GitRunOptions {
  /** Written to git's stdin, which is closed afterwards. */
  readonly input?: string | Buffer;
  /** Extra environment entries (e.g. a fallback identity). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface GitRunnerOptions {
  /** The repository every command runs in (`git -C`): a clone, or a bare repository. */
  readonly gitDir: string;
  /** A command still running after this long is stopped and reported as a {@link GitError} (none: no limit). */
  readonly timeoutMs?: number;
  /** Called once per git process spawned, with its subcommand (benchmark and tests). */
  readonly onSpawn?: (subcommand: string) => void;
  /**
   * The whole environment of every git process, used as given (a server-side guard passes only
   * what git handed its hook; a user's folder passes the user's). Default: this process's
   * environment without repository variables.
   */
  readonly baseEnv?: NodeJS.ProcessEnv;
  /** The transports git may use, a subset of {@link ALLOWED_PROTOCOLS} (default: all of them). */
  readonly protocols?: readonly string[];
}

/** git in one repository, as callers see it. */
export interface GitCommand {
  /** Runs `git ARGS…`; resolves with any exit code (a caller that reads a refusal's output), rejects only when git could not run or ran out of time. */
  run(args: readonly string[], options?: GitRunOptions): Promise<GitOutput>;
  /**
   * Runs `git ARGS…` and resolves with its stdout; rejects with a {@link GitError} whenever git
   * exits non-zero, with stderr or without it (a `--quiet` query's "no", like `merge-base
   * --is-ancestor`, is a rejection: callers that ask one say what "no" means with `.catch`), or
   * with a LockConfigurationError caused by one when the folder is no repository.
   */
  raw(args: readonly string[], options?: GitRunOptions): Promise<string>;
}

/** Variables that would point git at another repository than `gitDir` (e.g. when run from a hook). */
const REPOSITORY_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_QUARANTINE_PATH',
];

export class GitRunner implements GitCommand {
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly options: GitRunnerOptions) {
    const env: NodeJS.ProcessEnv = { ...(options.baseEnv ?? process.env) };
    if (options.baseEnv === undefined) for (const name of REPOSITORY_VARIABLES) delete env[name];
    // Fail fast instead of prompting: an unreachable or credential-less remote is a backend error.
    env.GIT_TERMINAL_PROMPT = '0';
    env.GCM_INTERACTIVE = 'never';
    // Messages are matched (refusal reasons, missing refs), so they must not be translated.
    env.LC_ALL = 'C';
    env.LANGUAGE = '';
    env.GIT_OPTIONAL_LOCKS = '0';
    env.GIT_ALLOW_PROTOCOL = allowedProtocols(options.protocols ?? ALLOWED_PROTOCOLS, env.GIT_ALLOW_PROTOCOL).join(':');
    this.env = env;
  }

  /** The repository every command runs in (`git -C`). */
  get dir(): string {
    return this.options.gitDir;
  }

  /** Runs `git -C gitDir ARGS…`; resolves with any exit code, rejects only when git could not run or ran out of time. */
  run(args: readonly string[], options: GitRunOptions = {}): Promise<GitOutput> {
    const subcommand = subcommandOf(args);
    this.options.onSpawn?.(subcommand);
    const program = gitProgram();
    return new Promise((resolve, reject) => {
      const argv = ['-C', this.options.gitDir, ...args];
      const spawning = {
        env: options.env ? { ...this.env, ...options.env, GIT_ALLOW_PROTOCOL: this.env.GIT_ALLOW_PROTOCOL } : this.env,
        windowsHide: true,
      };
      // Without input git's stdin is /dev/null: no pipe to open and tear down (each one a handle, on every push).
      const child =
        options.input === undefined
          ? spawn(program.program, argv, { ...spawning, stdio: ['ignore', 'pipe', 'pipe'] })
          : spawn(program.program, argv, { ...spawning, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      // SIGTERM first: git then removes its lock files, which a SIGKILL would leave behind.
      const timer =
        this.options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = true;
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
            }, this.options.timeoutMs);
      timer?.unref();
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.stdin?.on('error', () => undefined); // git may exit before reading its input
      child.on('error', error => {
        clearTimeout(timer);
        reject(spawnError(error, program));
      });
      let settled = false;
      const finish = (code: number | null) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        if (timedOut) {
          reject(
            new GitError(
              'timeout',
              subcommand,
              code,
              `A git command did not finish within ${formatLimit(this.options.timeoutMs ?? 0)}; check that the remote is reachable, or give a slow remote longer with gitTimeoutSeconds in .lockstep.json (or LOCKSTEP_GIT_TIMEOUT_SECONDS).`,
              Buffer.concat(err).toString('utf8'),
            ),
          );
          return;
        }
        resolve({ code: code ?? 128, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') });
      };
      // A timed-out git is answered as soon as it exits: what it started (a local remote's receive-pack and
      // its hooks) may hold its output open much longer, and 'close' waits for that.
      child.on('exit', code => {
        if (!timedOut) return;
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code);
      });
      child.on('close', finish);
      child.stdin?.end(options.input);
    });
  }

  async raw(args: readonly string[], options: GitRunOptions = {}): Promise<string> {
    const output = await this.run(args, options);
    if (output.code !== 0) throw failure(output, subcommandOf(args));
    return output.stdout.toString('utf8');
  }
}

/**
 * git in one folder of the user's (a clone, a bare remote): the user's environment and
 * configuration (repository variables included: a hook's GIT_DIR is the user's repository), no
 * prompt, no time limit.
 */
export function gitIn(dir: string, options: Pick<GitRunnerOptions, 'protocols'> = {}): GitRunner {
  return new GitRunner({ gitDir: dir, baseEnv: { ...process.env }, ...options });
}

/** The transports git may use: `wanted` (within {@link ALLOWED_PROTOCOLS}), narrowed further by the user's own GIT_ALLOW_PROTOCOL. */
function allowedProtocols(wanted: readonly string[], user: string | undefined): string[] {
  const allowed = wanted.filter(p => ALLOWED_PROTOCOLS.includes(p));
  if (user === undefined || user === '') return allowed;
  const theirs = user.split(':');
  return allowed.filter(p => theirs.includes(p));
}

/** The subcommand of `git ARGS…`, past `-c key=value` and other global options: safe to print (never a value). */
function subcommandOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') {
      i++;
      continue;
    }
    if (!args[i].startsWith('-')) return /^[a-z][a-z-]*$/.test(args[i]) ? args[i] : 'command';
  }
  return 'command';
}

function formatLimit(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

function spawnError(error: Error, program: GitProgram): Error {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
    const message =
      program.source === 'path'
        ? 'Lockstep needs the `git` program, which was not found on PATH; install git.'
        : `Lockstep runs the git that VS Code uses (${program.source === 'vscode' ? "its git extension's" : 'the git.path setting'}), which was not found; check VS Code's git.path setting, or install git.`;
    return new LockConfigurationError(message, {
      setting: program.source === 'path' ? 'driver' : 'git.path',
      cause: error,
    });
  }
  return new LockBackendError('git', 'git could not be started; check the system (process limits, memory).', { cause: error });
}
