import { spawn } from 'node:child_process';
import { LockBackendError, LockConfigurationError } from '../../errors';

/**
 * Runs git for the git driver. One small runner instead of simple-git because the driver needs,
 * for every call: data on stdin (plumbing), stdout *and* the exit code of a refused push
 * (`--porcelain` reports the refusal on stdout with exit 1), a controlled environment and a
 * per-command timeout, and a spawn counter for the benchmark. The user's own git configuration
 * and credential helpers apply; Lockstep never passes a credential.
 */

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
  /** The local clone every command runs in (`git -C`). */
  readonly gitDir: string;
  /** A command still running after this long is killed and reported as a backend error (none: no limit). */
  readonly timeoutMs?: number;
  /** Called once per git process spawned, with its subcommand (benchmark and tests). */
  readonly onSpawn?: (subcommand: string) => void;
  /**
   * The whole environment of every git process, used as given (a server-side guard passes only
   * what git handed its hook). Default: this process's environment without repository variables.
   */
  readonly baseEnv?: NodeJS.ProcessEnv;
}

/** Variables that would point git at another repository than `gitDir` (e.g. when run from a hook). */
const REPOSITORY_VARIABLES = [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX', 'GIT_QUARANTINE_PATH',
];

export class GitRunner {
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
    this.env = env;
  }

  /** Runs `git -C gitDir ARGS…`; resolves with any exit code, rejects only when git could not run. */
  run(args: readonly string[], options: GitRunOptions = {}): Promise<GitOutput> {
    this.options.onSpawn?.(args.find(a => !a.startsWith('-') && !a.includes('=')) ?? args[0] ?? '');
    return new Promise((resolve, reject) => {
      const child = spawn('git', ['-C', this.options.gitDir, ...args], {
        env: options.env ? { ...this.env, ...options.env } : this.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      // SIGTERM first: git then removes its lock files, which a SIGKILL would leave behind.
      const timer = this.options.timeoutMs === undefined ? undefined : setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
      }, this.options.timeoutMs);
      timer?.unref();
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.stdin.on('error', () => undefined); // git may exit before reading its input
      child.on('error', error => {
        clearTimeout(timer);
        reject(spawnError(error));
      });
      let settled = false;
      const finish = (code: number | null) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        if (timedOut) {
          reject(new LockBackendError('git',
            `A git command did not finish within ${formatLimit(this.options.timeoutMs ?? 0)}; check that the remote is reachable, or give a slow remote longer with gitTimeoutSeconds in .lockstep.json (or LOCKSTEP_GIT_TIMEOUT_SECONDS).`,
            { cause: new Error(redact(Buffer.concat(err).toString('utf8'))) }));
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
      child.stdin.end(options.input ?? '');
    });
  }

  /** Like {@link run} but any non-zero exit is turned into a typed error by {@link failure}. */
  async ok(args: readonly string[], options: GitRunOptions = {}): Promise<string> {
    const output = await this.run(args, options);
    if (output.code !== 0) throw failure(output);
    return output.stdout.toString('utf8');
  }
}

function formatLimit(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

function spawnError(error: Error): Error {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
    return new LockConfigurationError('Lockstep needs the `git` program, which was not found on PATH; install git.', { setting: 'driver', cause: error });
  }
  return new LockBackendError('git', 'git could not be started; check the system (process limits, memory).', { cause: error });
}

/**
 * The typed error for a failed git command. Messages never quote git's output: it can hold a
 * remote URL with credentials and ref names (raw backend keys). The redacted output is the cause.
 */
export function failure(output: GitOutput): Error {
  const text = output.stderr;
  const cause = new Error(`git exited ${output.code}: ${redact(text)}`);
  if (/not a git repository \(or any|cannot change to/i.test(text)) {
    return new LockConfigurationError('gitDir is not a git clone; point it at a local clone of the repository whose remote holds the lock refs.', { setting: 'gitDir', cause });
  }
  if (/does not appear to be a git repository|repository .* not found|No such device or address/i.test(text)) {
    return new LockBackendError('git', 'The git remote was not found; check the gitRemote setting (a remote name of the clone, a path or a URL) and that the repository exists.', { cause });
  }
  if (/Authentication failed|Permission denied|could not read Username|terminal prompts disabled|\b40[13]\b/i.test(text)) {
    return new LockBackendError('git', 'The git remote refused the credentials (or none were available without a prompt); set up your git credentials for this remote (credential helper or ssh key).', { cause });
  }
  if (/Could not resolve host|Connection refused|Connection timed out|Network is unreachable|Failed to connect|unable to access|Could not read from remote/i.test(text)) {
    return new LockBackendError('git', 'The git remote is unreachable; check the network and the gitRemote setting, then try again.', { cause });
  }
  return new LockBackendError('git', `A git command failed (exit ${output.code}); run \`git fetch\` in the clone to see why.`, { cause });
}

/** Removes credentials from URLs and full object names / digests (ref names are backend keys). */
export function redact(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@')
    .replace(/\b[0-9a-f]{40,64}\b/gi, '…');
}
