import { scaled } from './calibration';
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childEnv, finished, lapsingGrantArgv, REPO_ROOT } from './children';
import { identityOf, type CliResult, type TeamMember } from './gitFixture';
import { makeTempDir, removeTempDir } from './tempDir';
import { startGitDaemon, type GitDaemon } from './gitDaemon';

/**
 * A team for the fencing tests: a bare remote guarded by `lockstep hooks install --server`, clones
 * with their own `user.email` and `lockstep hooks install`, a committed `.lockstep.json` from
 * `lockstep init --server-guard`, and one file store (LOCKSTEP_PATH) shared by everyone.
 *
 * Why not gitFixture's team: the hooks embed the absolute path of the CLI that installed them, so
 * these tests run the built `dist/cli.js` (gitFixture memoises a temporary bundle per process), and
 * they need git runs that may fail (refused pushes) with their own environment (a PATH without
 * node, a broken LOCKSTEP_PATH). Identities and result shapes are gitFixture's.
 *
 * Every byte any command prints is kept, and after every command the owner tokens and push proofs
 * of every clone are collected, so a test can check that none of them ever left the clone.
 */

export type { CliResult, TeamMember };
export { identityOf };

export const DIST_CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

let built: Promise<string> | undefined;

/** Builds dist/cli.js once per process (`node scripts/build.mjs --no-types`). */
export function buildCli(): Promise<string> {
  built ??= new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/build.mjs', '--no-types'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    finished(child, 120_000).then(done => {
      if (done.code === 0 && fs.existsSync(DIST_CLI)) resolve(DIST_CLI);
      else reject(new Error(`scripts/build.mjs failed (${done.code}): ${done.stderr}`));
    }, reject);
  });
  return built;
}

export interface RunOptions {
  /** Extra environment (replaces the team's values of the same name). */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  /** Standard input (closed when absent). */
  readonly input?: string;
  /** The command prints a secret on purpose (a test reading push.pushOption): not kept for the leak check. */
  readonly printsSecrets?: boolean;
}

export interface FencingTeam {
  readonly root: string;
  /** The bare remote's folder (tests read it directly). */
  readonly remote: string;
  /** How the clones reach it (its path, or a git:// URL). */
  readonly remoteUrl: string;
  readonly store: string;
  readonly container: string;
  readonly cli: string;
  readonly members: readonly TeamMember[];
  /** The environment every git and lockstep process gets (HOME, LOCKSTEP_PATH, no developer config). */
  readonly env: NodeJS.ProcessEnv;
  member(name: string): TeamMember;
  /** `node dist/cli.js --cwd DIR [--json] ARGS…`; `json` defaults to true. */
  lockstep(dir: string, args: readonly string[], options?: RunOptions & { json?: boolean }): Promise<CliResult>;
  /**
   * Acquires the lock in the clone DIR with the shortest lease (60 s), dated so that it runs out `lapseMs`
   * from now (lapsingGrant.ts): a holder going silent within seconds, without waiting a minute.
   */
  lapsingGrant(dir: string, lapseMs?: number): Promise<{ grant: number; expiresAt: number; identity: string }>;
  /** git in DIR; never throws on a non-zero exit. */
  git(dir: string, args: readonly string[], options?: RunOptions): Promise<CliResult>;
  /** git in DIR; throws (with stderr) on a non-zero exit; returns trimmed stdout. */
  gitOk(dir: string, ...args: string[]): Promise<string>;
  /** The values of the clone's push.pushOption (which hold the proof: not kept for the leak check). */
  pushOptions(who: TeamMember): Promise<string[]>;
  /** Writes FILE in a clone, commits it and returns the new commit's sha. */
  commit(who: TeamMember, file: string, text?: string): Promise<string>;
  /** The sha of a branch in the shared remote ('' when it does not exist). */
  remoteSha(branch?: string): string;
  /** Owner tokens and push proofs seen in any clone so far. */
  secrets(): string[];
  /** Everything printed so far (stdout and stderr of every command). */
  readonly outputs: readonly string[];
  /** Fails if any owner token or push proof seen appears in any output or in `texts`. */
  assertNoSecretLeaked(texts?: readonly string[]): void;
  dispose(): void;
}

export interface FencingTeamOptions {
  readonly members: readonly string[];
  /** Operators' identities (default ops@example.com, who has no clone: clears run with LOCKSTEP_IDENTITY). */
  readonly operators?: readonly string[];
  /** Install the remote's pre-receive guard (default true). */
  readonly serverHooks?: boolean;
  /** Install each clone's pre-push guard (default true). */
  readonly clientHooks?: boolean;
  /** The container's driver (default file). */
  readonly driver?: 'file' | 'git';
  /** More arguments for `lockstep hooks install --server`. */
  readonly serverInstallArgs?: readonly string[];
  /** More arguments for `lockstep init` (e.g. `--driver git`). */
  readonly initArgs?: readonly string[];
  /**
   * How the clones reach the shared remote: its path (the hook inherits the pusher's environment),
   * or `git daemon --enable=receive-pack` (the hook runs in the daemon's own minimal environment).
   */
  readonly transport?: 'path' | 'daemon';
  /** More environment for every process (the backend's LOCKSTEP_* settings; the server hook pins them at install). */
  readonly env?: Readonly<Record<string, string>>;
  /** Commands run in the founder's clone before `lockstep init` (e.g. `['migrate']`). */
  readonly beforeInit?: readonly (readonly string[])[];
  /** Overrides written into `.lockstep.json` before it is committed and pinned (e.g. `{ windowSeconds: 6 }`). */
  readonly settings?: Readonly<Record<string, unknown>>;
}

const PROOF_LINE = /lockstep-proof=([0-9a-f]{64})/g;

export async function createFencingTeam(options: FencingTeamOptions): Promise<FencingTeam> {
  const cli = await buildCli();
  const root = makeTempDir('lockstep-fence');
  const home = path.join(root, 'home');
  const store = path.join(root, 'store');
  fs.mkdirSync(home);
  fs.mkdirSync(store);
  const env = childEnv({ HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LOCKSTEP_PATH: store });
  for (const name of Object.keys(env)) {
    if (name.startsWith('GIT_') && !['GIT_CONFIG_NOSYSTEM', 'GIT_TERMINAL_PROMPT'].includes(name)) delete env[name];
  }
  Object.assign(env, options.env);

  const outputs: string[] = [];
  const secrets = new Set<string>();
  const clones: string[] = [];
  const collect = () => {
    for (const dir of clones) {
      const lockstepDir = path.join(dir, '.git', 'lockstep');
      try {
        const token = (JSON.parse(fs.readFileSync(path.join(lockstepDir, 'session.json'), 'utf8')) as { token?: string }).token;
        if (token) secrets.add(token);
      } catch {
        /* no session */
      }
      try {
        const pending = (JSON.parse(fs.readFileSync(path.join(lockstepDir, 'pending.json'), 'utf8')) as { token?: string }).token;
        if (pending) secrets.add(pending);
      } catch {
        /* no acquire pending */
      }
      try {
        for (const m of fs.readFileSync(path.join(lockstepDir, 'push.config'), 'utf8').matchAll(PROOF_LINE)) secrets.add(m[1]);
      } catch {
        /* no proof */
      }
    }
  };
  const run = async (file: string, argv: readonly string[], cwd: string, opts: RunOptions = {}): Promise<CliResult> => {
    const child = spawn(file, argv, {
      cwd,
      env: { ...env, ...opts.env },
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(opts.input);
    const done = await finished(child, opts.timeoutMs ?? 60_000);
    if (!opts.printsSecrets) outputs.push(done.stdout, done.stderr);
    collect();
    return { code: done.code, stdout: done.stdout, stderr: done.stderr, json: undefined };
  };
  const lockstep = async (dir: string, args: readonly string[], opts: RunOptions & { json?: boolean } = {}): Promise<CliResult> => {
    const json = opts.json ?? true;
    const result = await run(process.execPath, [cli, '--cwd', dir, ...(json ? ['--json'] : []), ...args], root, opts);
    if (!json) return result;
    const lines = result.stdout.split('\n').filter(l => l.trim() !== '');
    assert.equal(lines.length, 1, `--json prints exactly one line; got ${JSON.stringify(result.stdout)} (stderr ${result.stderr})`);
    return { ...result, json: JSON.parse(lines[0]) };
  };
  const git = (dir: string, args: readonly string[], opts?: RunOptions) => run('git', args, dir, opts);
  const lapsingGrant = async (dir: string, lapseMs = 2_000) => {
    const result = await run(process.execPath, lapsingGrantArgv(dir, lapseMs), REPO_ROOT);
    assert.equal(result.code, 0, `the lapsing grant in ${path.basename(dir)} failed: ${result.stdout}${result.stderr}`);
    return JSON.parse(result.stdout) as { grant: number; expiresAt: number; identity: string };
  };
  const gitOk = async (dir: string, ...args: string[]): Promise<string> => {
    const result = await git(dir, args);
    assert.equal(result.code, 0, `git ${args.join(' ')} in ${path.basename(dir)} failed: ${result.stderr}`);
    return result.stdout.trim();
  };
  const lockstepOk = async (dir: string, args: readonly string[]): Promise<any> => {
    const result = await lockstep(dir, args);
    assert.equal(result.code, 0, `lockstep ${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
    return result.json;
  };

  const remote = path.join(root, 'remote.git');
  await gitOk(root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  let daemon: GitDaemon | undefined;
  if (options.transport === 'daemon') daemon = await startGitDaemon(root);
  const remoteUrl = daemon ? `${daemon.url}/remote.git` : remote;

  // The founder's clone: a first commit, `lockstep init --server-guard`, the committed .lockstep.json.
  const seed = path.join(root, 'seed');
  await gitOk(root, 'clone', '--quiet', remoteUrl, seed);
  await gitOk(seed, 'config', 'user.name', 'seed');
  await gitOk(seed, 'config', 'user.email', identityOf('seed'));
  await gitOk(seed, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  fs.writeFileSync(path.join(seed, 'README.md'), '# shared work\n');
  await gitOk(seed, 'add', 'README.md');
  await gitOk(seed, 'commit', '--quiet', '-m', 'first');
  await gitOk(seed, 'push', '--quiet', '-u', 'origin', 'main');
  const operators = options.operators ?? ['ops@example.com'];
  for (const args of options.beforeInit ?? []) await lockstepOk(seed, args);
  const init = await lockstepOk(seed, [
    'init',
    '--server-guard',
    ...(options.driver ? ['--driver', options.driver] : []),
    ...operators.flatMap(o => ['--operator', o]),
    ...(options.initArgs ?? []),
  ]);
  assert.equal(init.settings.serverGuard, true);
  if (!options.initArgs) assert.deepEqual(init.settings.protectedBranches, ['main']);
  if (options.settings) {
    const file = path.join(seed, '.lockstep.json');
    fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...options.settings }, null, 2)}\n`);
  }
  await gitOk(seed, 'add', '.lockstep.json');
  await gitOk(seed, 'commit', '--quiet', '-m', 'lockstep container');
  // The server guard is not installed yet: it pins the settings this push brings.
  await gitOk(seed, 'push', '--quiet', 'origin', 'main');
  if (options.serverHooks ?? true) await lockstepOk(remote, ['hooks', 'install', '--server', ...(options.serverInstallArgs ?? [])]);

  const members: TeamMember[] = [];
  for (const name of options.members) {
    const dir = path.join(root, name);
    await gitOk(root, 'clone', '--quiet', remoteUrl, dir);
    await gitOk(dir, 'config', 'user.name', name);
    await gitOk(dir, 'config', 'user.email', identityOf(name));
    if (options.clientHooks ?? true) await lockstepOk(dir, ['hooks', 'install']);
    clones.push(dir);
    members.push({ name, identity: identityOf(name), dir });
  }

  let counter = 0;
  return {
    root,
    remote,
    remoteUrl,
    store,
    cli,
    members,
    env,
    container: init.container as string,
    outputs,
    member(name) {
      const found = members.find(m => m.name === name);
      if (!found) throw new Error(`no member ${name}`);
      return found;
    },
    lockstep,
    lapsingGrant,
    git,
    gitOk,
    async pushOptions(who) {
      const result = await git(who.dir, ['config', '--get-all', 'push.pushOption'], { printsSecrets: true });
      return result.stdout.split('\n').filter(Boolean);
    },
    async commit(who, file, text) {
      fs.writeFileSync(path.join(who.dir, file), text ?? `${who.name} ${++counter}\n`);
      await gitOk(who.dir, 'add', file);
      await gitOk(who.dir, 'commit', '--quiet', '-m', `${who.name}: ${file}`);
      return gitOk(who.dir, 'rev-parse', 'HEAD');
    },
    remoteSha(branch = 'main') {
      try {
        return execFileSync('git', ['-C', remote, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
          encoding: 'utf8',
          env,
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim();
      } catch {
        return '';
      }
    },
    secrets() {
      collect();
      return [...secrets];
    },
    assertNoSecretLeaked(texts = []) {
      collect();
      assert.ok(secrets.size > 0, 'the test saw at least one owner token or proof');
      for (const secret of secrets) {
        assert.match(secret, /^[0-9a-f]{64}$/);
        for (const [i, text] of outputs.entries())
          assert.ok(!text.includes(secret), `output #${i} contains an owner token or proof:\n${text.slice(0, 400)}`);
        for (const [i, text] of texts.entries()) assert.ok(!text.includes(secret), `text #${i} contains an owner token or proof`);
      }
    },
    dispose: () => {
      daemon?.stop();
      removeTempDir(root);
    },
  };
}

/** Polls `lockstep status --json` in DIR until the holder's lease has expired (no fixed sleeps). */
/**
 * Polls `status` until the holder's lease has run out. The deadline follows the lease itself: its time left as the
 * first status reads it, plus `marginMs` scaled by the run's slowdown (test/helpers/calibration.ts) for the status
 * calls that see it — never a fixed slot, which a loaded machine outran (the page's creation there took 19 s, and a
 * lease dated from it ran past a 30 s wait).
 */
export async function waitUntilExpired(team: FencingTeam, dir: string, marginMs = 30_000): Promise<any> {
  let deadline: number | undefined;
  for (;;) {
    const status = await team.lockstep(dir, ['status']);
    assert.equal(status.code, 0, `status failed: ${status.stdout}${status.stderr}`);
    if (status.json.holder !== null && status.json.timeLeftMs < 0) return status.json;
    deadline ??= performance.now() + Math.max(0, status.json.timeLeftMs ?? 0) + scaled(marginMs);
    if (performance.now() >= deadline) throw new Error(`the holder's lease did not expire by its end plus ${scaled(marginMs)} ms`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

/** A push that git reports as failed, with the reason on the pusher's terminal. */
export function refused(result: CliResult, what: string): string {
  assert.notEqual(result.code, 0, `${what} was expected to fail but exited 0:\n${result.stderr}`);
  return result.stderr;
}

/** Refused by this clone's pre-push hook: the guard's line, and nothing from the remote. */
export function refusedByClient(result: CliResult, what: string): string {
  const stderr = refused(result, what);
  assert.match(stderr, /^lockstep: /m, `${what}: the client guard's refusal\n${stderr}`);
  assert.doesNotMatch(stderr, /remote: lockstep|pre-receive hook declined/, `${what}: refused before reaching the remote`);
  assert.match(stderr, /failed to push some refs/);
  return stderr;
}

/** Refused by the remote's pre-receive hook; the refusal reaches the pusher as `remote: lockstep: …`. */
export function refusedByServer(result: CliResult, what: string): string {
  const stderr = refused(result, what);
  assert.match(stderr, /^remote: lockstep: refused refs\/heads\/main: /m, `${what}: the server guard's refusal\n${stderr}`);
  assert.match(stderr, /\[remote rejected\] .*\(pre-receive hook declined\)/);
  return stderr;
}
