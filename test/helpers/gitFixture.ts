import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import * as fs from 'node:fs';
import { asciiBundle } from '../../scripts/asciiComments.mjs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { childEnv, finished, lapsingGrantArgv, REPO_ROOT } from './children';
import { storeTexts } from './storeTexts';
import { makeTempDir, removeTempDir } from './tempDir';

/**
 * A real team for the command line's integration tests: a bare remote, clones of it with their own
 * `user.email`, a committed `.lockstep.json` written by `lockstep init`, and one file-driver store
 * (LOCKSTEP_PATH) shared by the clones, as on one machine or a shared disk. Every command runs as a
 * separate `node cli.js` process; every byte it prints is kept, so tests can check that no owner
 * token ever leaves `.git/lockstep/session.json`.
 */

export interface TeamMember {
  readonly name: string;
  readonly identity: string;
  readonly dir: string;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The one JSON object printed with --json (undefined without it). */
  readonly json: any;
}

export interface GitFixture {
  readonly root: string;
  /** The founder's clone, where `lockstep init` ran. */
  readonly seed: string;
  readonly remote: string;
  readonly store: string;
  readonly container: string;
  readonly members: readonly TeamMember[];
  member(name: string): TeamMember;
  /**
   * `lockstep --cwd DIR --json ARGS…` in a new process (`json: false` for human output). `env`
   * changes the clone's LOCKSTEP_* variables for this one command (undefined removes one).
   */
  cli(
    who: TeamMember,
    args: readonly string[],
    options?: { json?: boolean; timeoutMs?: number; env?: Record<string, string | undefined> },
  ): Promise<CliResult>;
  /** `lockstep --cwd DIR ARGS…` started and handed over as it runs (stdout and stderr pipes), for tests of its streams. */
  spawnCli(who: TeamMember, args: readonly string[]): ChildProcessByStdio<null, Readable, Readable>;
  /** git in a clone, synchronously. */
  git(who: TeamMember, ...args: string[]): string;
  /**
   * Acquires the lock in `who`'s clone with the shortest lease (60 s), dated so that it runs out `lapseMs`
   * from now (lapsingGrant.ts): a holder going silent within seconds, without waiting a minute.
   */
  lapsingGrant(who: TeamMember, lapseMs?: number): Promise<{ grant: number; expiresAt: number; identity: string }>;
  /** The owner token of a clone's session, if it has one (read only to check that it never leaks). */
  sessionToken(who: TeamMember): string | undefined;
  /** Every owner token any clone ever held (collected after each command). */
  readonly tokensSeen: ReadonlySet<string>;
  /** Everything every command printed, stdout and stderr. */
  readonly outputs: readonly string[];
  /** Fails if any token seen appears in any output or in the shared store. */
  assertNoTokenLeaked(): void;
  dispose(): void;
}

export interface GitFixtureOptions {
  /** Short names; identity is `<name>@example.com`. */
  readonly members: readonly string[];
  /** Names of members listed as operators. */
  readonly operators: readonly string[];
  /** Overrides written into `.lockstep.json` before it is committed (seconds). */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** More arguments for `lockstep init` (`--driver git`, `--server-guard`…). */
  readonly initArgs?: readonly string[];
  /** More environment for every CLI process (e.g. LOCKSTEP_DATABASE_URL for the sql driver). */
  readonly env?: Readonly<Record<string, string>>;
  /** Commands run in the founder's clone before `lockstep init` (e.g. `['migrate']` for the sql driver). */
  readonly beforeInit?: readonly (readonly string[])[];
}

export const identityOf = (name: string): string => `${name}@example.com`;

/** The JSON of a command that must have succeeded (exit 0, ok: true). */
export function expectOk(result: CliResult, what: string): any {
  assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  assert.equal(result.json.ok, true);
  return result.json;
}

/** The error of a command that must have failed with this exit status, error code and (for refusals) reason. */
export function expectError(result: CliResult, exit: number, code: string, reason?: string): any {
  assert.equal(result.code, exit, `expected exit ${exit}, got ${result.code}\n${result.stdout}${result.stderr}`);
  assert.equal(result.json.ok, false);
  assert.equal(result.json.exitCode, exit);
  assert.equal(result.json.error.code, code, JSON.stringify(result.json));
  if (reason !== undefined) assert.equal(result.json.error.reason, reason, JSON.stringify(result.json));
  return result.json.error;
}

let cliBundle: Promise<string> | undefined;

/**
 * The CLI under test: LOCKSTEP_TEST_CLI (e.g. dist/cli.js) when set, else fresh esbuild bundles of
 * src/cli/main.ts, guardMain.ts and holderMain.ts behind src/cli/launcher.cjs (and codeCache.cjs), laid out as scripts/build.mjs
 * lays out dist/, so the tests never run stale code and the hooks run the guards' own bundle.
 */
export function cliPath(): Promise<string> {
  cliBundle ??= (async () => {
    const fromEnv = process.env.LOCKSTEP_TEST_CLI;
    if (fromEnv) return path.resolve(REPO_ROOT, fromEnv);
    const esbuild = await import('esbuild');
    const dir = path.join(REPO_ROOT, 'node_modules', '.cache', 'lockstep-integration', `cli-${process.pid}`);
    fs.mkdirSync(dir, { recursive: true });
    const bundle = async (entry: string, outfile: string) => {
      const built = await esbuild.build({
        entryPoints: [path.join(REPO_ROOT, entry)],
        outfile: path.join(dir, outfile),
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        logLevel: 'warning',
        external: ['vscode', 'better-sqlite3', 'pg-native', 'cpu-features'],
        // As scripts/build.mjs: import() becomes require in the bundles dist/cli.js loads through the code cache.
        supported: { 'dynamic-import': false },
        write: false,
      });
      // As scripts/build.mjs lands its launched bundles: the comments esbuild keeps in ASCII (Node reads the file one
      // byte a character, as it reads dist/'s).
      for (const out of built.outputFiles) fs.writeFileSync(out.path, (await asciiBundle(esbuild, out.text)).code);
    };
    await Promise.all([
      bundle('src/cli/main.ts', 'cli-main.js'),
      bundle('src/cli/guardMain.ts', 'guard-main.js'),
      bundle('src/cli/holderMain.ts', 'holder-main.js'),
    ]);
    const launcher = path.join(dir, 'cli.js');
    fs.copyFileSync(path.join(REPO_ROOT, 'src/cli/launcher.cjs'), launcher);
    fs.copyFileSync(path.join(REPO_ROOT, 'src/cli/codeCache.cjs'), path.join(dir, 'code-cache.js'));
    // The etcd client, bundled in, reads its gRPC definitions from `${__dirname}/../proto/` (scripts/build.mjs puts
    // them in dist/proto/): one folder shared by every run's bundles, each file landed whole by a rename.
    const protos = path.join(dir, '..', 'proto');
    fs.mkdirSync(protos, { recursive: true });
    for (const proto of ['rpc.proto', 'kv.proto', 'auth.proto']) {
      const temporary = path.join(protos, `${proto}.tmp-${process.pid}`);
      fs.copyFileSync(path.join(REPO_ROOT, 'node_modules/etcd3/proto', proto), temporary);
      fs.renameSync(temporary, path.join(protos, proto));
    }
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    return launcher;
  })();
  return cliBundle;
}

function gitEnv(home: string): NodeJS.ProcessEnv {
  const env = childEnv({ HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' });
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_EMAIL'])
    delete env[name];
  return env;
}

export async function createGitFixture(options: GitFixtureOptions): Promise<GitFixture> {
  const cli = await cliPath();
  const root = makeTempDir('lockstep-cli');
  const home = path.join(root, 'home');
  const store = path.join(root, 'store');
  fs.mkdirSync(home);
  fs.mkdirSync(store);
  const env = gitEnv(home);
  // Clones and CLI processes share the file store; nothing of the developer's LOCKSTEP_* leaks in.
  const cliEnv: NodeJS.ProcessEnv = { ...env, LOCKSTEP_PATH: store, ...options.env };
  const git = (dir: string, ...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });

  const remote = path.join(root, 'remote.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote], { env });

  // The founder's clone: a first commit, then `lockstep init`, then the committed .lockstep.json.
  const seed = path.join(root, 'seed');
  execFileSync('git', ['clone', '--quiet', remote, seed], { env, stdio: 'ignore' });
  git(seed, 'config', 'user.name', 'seed');
  git(seed, 'config', 'user.email', identityOf('seed'));
  git(seed, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  fs.writeFileSync(path.join(seed, 'README.md'), '# shared work\n');
  git(seed, 'add', 'README.md');
  git(seed, 'commit', '--quiet', '-m', 'first');
  git(seed, 'push', '--quiet', '-u', 'origin', 'main');

  const outputs: string[] = [];
  const tokensSeen = new Set<string>();
  const run = async (
    dir: string,
    args: readonly string[],
    json: boolean,
    timeoutMs: number,
    extraEnv: Record<string, string | undefined> = {},
  ): Promise<CliResult> => {
    const argv = [cli, '--cwd', dir, ...(json ? ['--json'] : []), ...args];
    const env = { ...cliEnv, ...extraEnv };
    for (const [k, v] of Object.entries(extraEnv)) if (v === undefined) delete env[k];
    const done = await finished(spawn(process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }), timeoutMs);
    outputs.push(done.stdout, done.stderr);
    let parsed: unknown;
    if (json) {
      const lines = done.stdout.split('\n').filter(l => l.trim() !== '');
      assert.equal(lines.length, 1, `--json prints exactly one line; got ${JSON.stringify(done.stdout)} (stderr ${done.stderr})`);
      parsed = JSON.parse(lines[0]);
    }
    return { code: done.code, stdout: done.stdout, stderr: done.stderr, json: parsed };
  };

  for (const args of options.beforeInit ?? []) {
    const done = await run(seed, args, true, 30_000);
    assert.equal(done.code, 0, `lockstep ${args.join(' ')} failed: ${done.stdout} ${done.stderr}`);
  }
  const init = await run(
    seed,
    ['init', ...options.operators.flatMap(o => ['--operator', identityOf(o)]), ...(options.initArgs ?? [])],
    true,
    30_000,
  );
  assert.equal(init.code, 0, `lockstep init failed: ${init.stdout} ${init.stderr}`);
  const file = path.join(seed, '.lockstep.json');
  const written = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  assert.deepEqual(written.protectedBranches, ['main'], "init protects the remote's default branch");
  if (options.settings) fs.writeFileSync(file, `${JSON.stringify({ ...written, ...options.settings }, null, 2)}\n`);
  git(seed, 'add', '.lockstep.json');
  git(seed, 'commit', '--quiet', '-m', 'lockstep container');
  git(seed, 'push', '--quiet', 'origin', 'main');

  const members: TeamMember[] = options.members.map(name => {
    const dir = path.join(root, name);
    execFileSync('git', ['clone', '--quiet', remote, dir], { env, stdio: 'ignore' });
    git(dir, 'config', 'user.name', name);
    git(dir, 'config', 'user.email', identityOf(name));
    return { name, identity: identityOf(name), dir };
  });

  const sessionFile = (who: TeamMember) => path.join(who.dir, '.git', 'lockstep', 'session.json');
  /**
   * The token in a clone's token file, or undefined when there is no file. A file that exists but cannot be read, or
   * holds no token, fails the test: it is not a removed session (Lockstep writes these files whole, by rename).
   */
  const tokenIn = (file: string): string | undefined => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(
        `${path.basename(file)} exists but cannot be read (${(error as NodeJS.ErrnoException).code}): not the same as removed`,
      );
    }
    let token: unknown;
    try {
      token = (JSON.parse(text) as { token?: unknown }).token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string')
      throw new Error(`${path.basename(file)} exists but holds no token (${text.length} bytes): a torn or foreign file, not a removed one`);
    return token;
  };
  const sessionToken = (who: TeamMember): string | undefined => tokenIn(sessionFile(who));
  const collectTokens = () => {
    for (const m of members) {
      const token = sessionToken(m);
      if (token) tokensSeen.add(token);
      // An acquire whose outcome is not known yet keeps its token beside the session.
      const pending = tokenIn(path.join(m.dir, '.git', 'lockstep', 'pending.json'));
      if (pending) tokensSeen.add(pending);
    }
  };

  return {
    root,
    seed,
    remote,
    store,
    members,
    container: written.container as string,
    tokensSeen,
    outputs,
    member(name) {
      const found = members.find(m => m.name === name);
      if (!found) throw new Error(`no member ${name}`);
      return found;
    },
    async cli(who, args, opts = {}) {
      const result = await run(who.dir, args, opts.json ?? true, opts.timeoutMs ?? 60_000, opts.env);
      collectTokens();
      return result;
    },
    spawnCli: (who, args) =>
      spawn(process.execPath, [cli, '--cwd', who.dir, ...args], { cwd: root, env: cliEnv, stdio: ['ignore', 'pipe', 'pipe'] }),
    git: (who, ...args) => git(who.dir, ...args),
    async lapsingGrant(who, lapseMs = 2_000) {
      const done = await finished(
        spawn(process.execPath, lapsingGrantArgv(who.dir, lapseMs), { cwd: REPO_ROOT, env: cliEnv, stdio: ['ignore', 'pipe', 'pipe'] }),
        60_000,
      );
      collectTokens();
      assert.equal(done.code, 0, `the lapsing grant in ${who.name}'s clone failed: ${done.stdout}${done.stderr}`);
      return JSON.parse(done.stdout) as { grant: number; expiresAt: number; identity: string };
    },
    sessionToken,
    assertNoTokenLeaked() {
      collectTokens();
      assert.ok(tokensSeen.size > 0, 'the test saw at least one owner token');
      // Small records are a symbolic link's target (file driver), large pages packed: storeTexts reads both.
      const storeText = storeTexts(store);
      for (const token of tokensSeen) {
        assert.match(token, /^[0-9a-f]{64}$/);
        for (const [i, text] of outputs.entries()) assert.ok(!text.includes(token), `output #${i} contains an owner token`);
        for (const text of storeText) assert.ok(!text.includes(token), 'the shared store contains an owner token');
      }
    },
    dispose: () => removeTempDir(root),
  };
}

/** The mode bits of a clone's session file and folder. */
export function sessionModes(who: TeamMember): { file: number; dir: number } {
  const dir = path.join(who.dir, '.git', 'lockstep');
  return { file: fs.statSync(path.join(dir, 'session.json')).mode & 0o777, dir: fs.statSync(dir).mode & 0o777 };
}
