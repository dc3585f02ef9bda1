// A real Lockstep container for the VS Code tests and the demo's shape: a bare remote as origin, a clone with
// `.lockstep.json` from `lockstep init` committed and pushed (and the pre-push guard installed), a second clone
// for a coworker, and one shared file store. Built with the project's own dist/cli.js and real git.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './codeServer.mjs';

export const CLI = path.join(PROJECT_ROOT, 'dist', 'cli.js');

/** Short timings so that expiry, handover windows and heartbeats happen within a test's deadline. */
export const FAST_SETTINGS = { leaseTtlSeconds: 60, heartbeatSeconds: 5, windowSeconds: 30 };

const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: gitEnv() });

/** git without the machine's global or system configuration (a default branch, hooks path, signing…). */
function gitEnv() {
  return { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
}

/** `lockstep …` through the built CLI in `cwd`, as `identity` when given; returns its JSON answer. */
export function lockstep(cwd, args, { store, identity } = {}) {
  const env = { ...gitEnv(), ...(store ? { LOCKSTEP_PATH: store } : {}), ...(identity ? { LOCKSTEP_IDENTITY: identity } : {}) };
  if (!identity) delete env.LOCKSTEP_IDENTITY;
  const out = execFileSync(process.execPath, [CLI, '--json', ...args], { cwd, env, encoding: 'utf8' });
  return JSON.parse(out);
}

/**
 * A grant in `cwd` whose lease runs out `lapseMs` from now (default 1 s), as `identity` when given: the shortest
 * lease (60 s), made by core's real Container on the real store with only its clock dated back
 * (test/helpers/lapsingGrant.ts). Returns `{ grant, expiresAt, identity }`.
 */
export function lapsingGrant(cwd, { store, identity, lapseMs = 1000 } = {}) {
  const env = { ...gitEnv(), ...(store ? { LOCKSTEP_PATH: store } : {}), ...(identity ? { LOCKSTEP_IDENTITY: identity } : {}) };
  if (!identity) delete env.LOCKSTEP_IDENTITY;
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', path.join(PROJECT_ROOT, 'test', 'helpers', 'lapsingGrant.ts'), '--cwd', cwd, '--lapse-ms', String(lapseMs)],
    { cwd: PROJECT_ROOT, env, encoding: 'utf8' },
  );
  return JSON.parse(out);
}

function cloneAs(remote, dir, email, name) {
  git(path.dirname(dir), 'clone', '--quiet', remote, dir);
  git(dir, 'config', 'user.email', email);
  git(dir, 'config', 'user.name', name);
  return dir;
}

/**
 * Creates, under `parent`: remote.git (bare, branch main), `alice/` (the workspace: git user.email
 * alice@example.com, .lockstep.json committed and pushed, pre-push guard installed), `bob/` (the coworker's clone,
 * bob@example.com, up to date) and `store/` (the file driver's folder, LOCKSTEP_PATH).
 * `driver` (default file) is the one `lockstep init --driver` writes; a SQL or Redis store's URL comes from the
 * environment (LOCKSTEP_DATABASE_URL, LOCKSTEP_REDIS_URL), as it would for a team. `store` reuses a folder.
 * @param {{ settings?: object, operator?: string, hooks?: boolean, alice?: string, bob?: string, files?: Record<string,string>, driver?: string, store?: string }} [options]
 */
export function createContainerFixture(parent, options = {}) {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const { settings = FAST_SETTINGS, operator = 'ops@example.com', hooks = true } = options;
  const remote = path.join(parent, 'remote.git');
  const store = options.store ?? path.join(parent, 'store');
  fs.mkdirSync(store, { recursive: true, mode: 0o700 });
  git(parent, 'init', '--quiet', '--bare', '--initial-branch=main', remote);

  const alice = cloneAs(remote, path.join(parent, 'alice'), options.alice ?? 'alice@example.com', 'Alice');
  git(alice, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  const files = options.files ?? { 'README.md': '# Sample\n', 'src/greeting.ts': 'export const greeting = "hello";\n' };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(alice, name)), { recursive: true });
    fs.writeFileSync(path.join(alice, name), text);
  }
  lockstep(alice, ['init', '--driver', options.driver ?? 'file', '--operator', operator], { store });
  // Settings beyond init's flags are edited in the file, as the README says.
  const file = path.join(alice, '.lockstep.json');
  fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...settings }, null, 2)}\n`);
  git(alice, 'add', '-A');
  git(alice, 'commit', '--quiet', '-m', 'A Lockstep container');
  git(alice, 'push', '--quiet', '-u', 'origin', 'main');
  if (hooks) lockstep(alice, ['hooks', 'install'], { store });

  const bob = cloneAs(remote, path.join(parent, 'bob'), options.bob ?? 'bob@example.com', 'Bob');
  if (hooks) lockstep(bob, ['hooks', 'install'], { store });
  const container = JSON.parse(fs.readFileSync(file, 'utf8')).container;
  return { remote, alice, bob, store, container };
}

/**
 * A multi-root workspace beside `fixture`: a second container (its own remote, alice's and bob's clones, on the
 * same store) under `parent/second`, and `parent/team.code-workspace` with alice's clones of both as its folders.
 */
export function createMultiRootWorkspace(parent, fixture) {
  const secondParent = path.join(parent, 'second');
  fs.mkdirSync(secondParent);
  const second = createContainerFixture(secondParent, { store: fixture.store, files: { 'docs/plan.md': '# Plan\n' } });
  const file = path.join(parent, 'team.code-workspace');
  fs.writeFileSync(file, `${JSON.stringify({ folders: [{ path: fixture.alice }, { path: second.alice, name: 'second' }] }, null, 2)}\n`);
  return { file, second };
}

/** What the extension host needs to drive the coworker's side (it inherits code-server's environment). */
export function fixtureEnvironment(fixture, workspace) {
  return {
    ...(workspace ? { LOCKSTEP_TEST_SECOND_CLONE: workspace.second.alice, LOCKSTEP_TEST_SECOND_COWORKER_CLONE: workspace.second.bob } : {}),
    LOCKSTEP_PATH: fixture.store,
    LOCKSTEP_TEST_COWORKER_CLONE: fixture.bob,
    LOCKSTEP_TEST_REMOTE: fixture.remote,
    LOCKSTEP_TEST_CLI: CLI,
    // git inside the host (the extension's landing checks, the tests' commits) without the machine's config.
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
  };
}
