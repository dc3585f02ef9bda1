import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hasNonAscii } from '../../scripts/asciiComments.mjs';
import { inCi } from '../helpers/ci';
import { childEnv } from '../helpers/children';
import { cliPath } from '../helpers/gitFixture';
import { nodeWithCompileCache } from '../helpers/nodeWithCompileCache';
import { useTempDir } from '../helpers/tempDir';

/**
 * dist/cli.js loads its bundle with V8's code cache (src/cli/codeCache.cjs) kept in a private per-user
 * folder. These tests run the launcher as the hooks and users do (real node processes, a real HOME) and
 * watch what it did through LOCKSTEP_DEBUG_CODE_CACHE=1 and the files it left: a second run uses the
 * cache, a cache that someone else could have written is never read, a damaged one is rewritten, and
 * none of it changes what a command prints or how it exits.
 */

interface Ran {
  status: number | null;
  stdout: string;
  /** What the command said on stderr, without the cache's debug lines. */
  stderr: string;
  /** The cache's debug lines, in order (`accepted`, `absent`, `written`, `off (…)`, …). */
  cache: string[];
}

const DEBUG_LINE = /^lockstep code cache: (.*)$/;
const onPosix = typeof process.geteuid === 'function';

function run(cli: string, args: readonly string[], cwd: string, env: Record<string, string | undefined>, node = process.execPath): Ran {
  const base = childEnv({ LOCKSTEP_DEBUG_CODE_CACHE: '1' });
  delete base.XDG_CACHE_HOME;
  const merged: NodeJS.ProcessEnv = { ...base, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  const done = spawnSync(node, [cli, ...args], { cwd, env: merged, encoding: 'utf8' });
  const lines = done.stderr.split('\n');
  return {
    status: done.status,
    stdout: done.stdout,
    stderr: lines.filter(l => !DEBUG_LINE.test(l)).join('\n'),
    cache: lines.flatMap(l => DEBUG_LINE.exec(l)?.slice(1) ?? []),
  };
}

/** The cache files of the bundle `bundle` in `folder`. */
function caches(folder: string, bundle: string): string[] {
  return fs.existsSync(folder) ? fs.readdirSync(folder).filter(n => n.startsWith(`${bundle}-`) && n.endsWith('.v8')) : [];
}

describe('code cache of the command line (dist/cli.js)', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-code-cache');
  let cli: string;
  let home: string;
  let folder: string;
  let work: string;

  before(async () => {
    cli = await cliPath();
  });
  beforeEach(() => {
    home = path.join(tmp.path, 'home');
    work = path.join(tmp.path, 'work');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.mkdirSync(work);
    folder = path.join(home, '.cache', 'lockstep', 'v8');
  });

  it('writes the cache after the first run, private to the user, and the second run uses it', () => {
    const first = run(cli, ['--version'], work, { HOME: home });
    assert.deepEqual(first.cache, ['absent', 'written']);
    const [file] = caches(folder, 'cli-main.js');
    assert.ok(file, `a cache of cli-main.js in ${folder}`);
    if (onPosix) {
      for (const dir of [path.join(home, '.cache'), path.join(home, '.cache', 'lockstep'), folder])
        assert.equal(fs.statSync(dir).mode & 0o777, 0o700, dir);
      assert.equal(fs.statSync(path.join(folder, file)).mode & 0o777, 0o600);
    }
    const second = run(cli, ['--version'], work, { HOME: home });
    assert.deepEqual(second.cache, ['accepted'], 'the second run compiles from the cache and writes nothing');
    assert.deepEqual([second.status, second.stdout, second.stderr], [first.status, first.stdout, first.stderr]);
    assert.deepEqual(caches(folder, 'cli-main.js'), [file]);
  });

  it('loads bundles in ASCII, as scripts/build.mjs lands them (Node reads them one byte a character)', () => {
    // The command line under test is built as dist/ is, comments made ASCII (scripts/asciiComments.mjs) included.
    for (const bundle of ['cli-main.js', 'guard-main.js', 'holder-main.js'])
      assert.equal(hasNonAscii(fs.readFileSync(path.join(path.dirname(cli), bundle), 'utf8')), false, bundle);
  });

  it('behaves as without the cache: the same output and exit, with and without it', () => {
    const plain = run(cli, ['status'], work, { HOME: home, LOCKSTEP_NO_CODE_CACHE: '1' });
    assert.deepEqual(plain.cache, ['off (LOCKSTEP_NO_CODE_CACHE)']);
    assert.equal(fs.existsSync(path.join(home, '.cache')), false, 'LOCKSTEP_NO_CODE_CACHE=1 creates no folder');
    run(cli, ['status'], work, { HOME: home });
    const cached = run(cli, ['status'], work, { HOME: home });
    assert.deepEqual(cached.cache, ['accepted']);
    assert.notEqual(plain.status, 0, 'status outside a clone fails');
    assert.deepEqual([cached.status, cached.stdout, cached.stderr], [plain.status, plain.stdout, plain.stderr]);
  });

  it("runs a command that loads a driver's library at run time (import()) the same from the cache", () => {
    // SQLite's `migrate` in a plain git repository imports better-sqlite3 (or node:sqlite) when it runs: the part
    // of a bundle that V8 compiles from the cache, in the run after the one that wrote it.
    spawnSync('git', ['init', '--quiet', work]);
    const sqlite = { HOME: home, LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: `sqlite:${path.join(tmp.path, 'locks.db')}` };
    const plain = run(cli, ['migrate'], work, { ...sqlite, LOCKSTEP_NO_CODE_CACHE: '1' });
    assert.equal(plain.status, 0, plain.stderr);
    const first = run(cli, ['migrate'], work, sqlite);
    const second = run(cli, ['migrate'], work, sqlite);
    assert.deepEqual([first.cache, second.cache], [['absent', 'written'], ['accepted']]);
    for (const ran of [first, second]) assert.deepEqual([ran.status, ran.stdout, ran.stderr], [plain.status, plain.stdout, plain.stderr]);
  });

  it('ignores a truncated or garbled cache file, rewrites it, and the command still works', () => {
    const first = run(cli, ['--version'], work, { HOME: home });
    const [file] = caches(folder, 'cli-main.js');
    const whole = fs.readFileSync(path.join(folder, file));
    fs.writeFileSync(path.join(folder, file), whole.subarray(0, Math.floor(whole.length / 2)));
    const truncated = run(cli, ['--version'], work, { HOME: home });
    assert.deepEqual(truncated.cache, ['rejected', 'written']);
    assert.deepEqual([truncated.status, truncated.stdout], [first.status, first.stdout]);
    assert.ok(fs.statSync(path.join(folder, file)).size > whole.length / 2, 'rewritten whole');
    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['accepted']);

    fs.writeFileSync(path.join(folder, file), Buffer.from('not a V8 code cache at all\n'.repeat(40)));
    const garbled = run(cli, ['--version'], work, { HOME: home });
    assert.deepEqual(garbled.cache, ['rejected', 'written']);
    assert.deepEqual([garbled.status, garbled.stdout], [first.status, first.stdout]);
    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['accepted']);
  });

  it('removes the copies that processes killed while writing left, once they are an hour old, when it writes a cache', () => {
    run(cli, ['--version'], work, { HOME: home });
    const [file] = caches(folder, 'cli-main.js');
    // Left by killed writers: an old and a fresh copy of this bundle's cache, an old one of another bundle's; and
    // an old file that only looks like one (not a pid) and one that is not ours at all: those two stay.
    const hourAndMinuteAgo = new Date(Date.now() - 61 * 60 * 1000);
    const planted = {
      old: `${file}.4242.tmp`,
      fresh: `${file}.4343.tmp`,
      otherBundle: 'guard-main.js-0123456789abcdef-0123456789abcdef-0123456789abcdef.v8.17.tmp',
      notAPid: `${file}.x.tmp`,
      notOurs: 'notes.tmp',
    };
    for (const name of Object.values(planted)) fs.writeFileSync(path.join(folder, name), 'partial');
    for (const name of [planted.old, planted.otherBundle, planted.notAPid, planted.notOurs])
      fs.utimesSync(path.join(folder, name), hourAndMinuteAgo, hourAndMinuteAgo);
    const left = () =>
      fs
        .readdirSync(folder)
        .filter(n => n.endsWith('.tmp'))
        .sort();

    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['accepted']);
    assert.deepEqual(left(), Object.values(planted).sort(), 'a run that reads the cache does not list the folder');

    fs.writeFileSync(path.join(folder, file), 'not a V8 code cache');
    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['rejected', 'written']);
    assert.deepEqual(left(), [planted.fresh, planted.notAPid, planted.notOurs].sort());
  });

  for (const [what, dir] of [
    ['the cache folder', ['.cache', 'lockstep', 'v8']],
    ['the folder above it', ['.cache', 'lockstep']],
    ['the user cache folder (~/.cache)', ['.cache']],
  ] as const)
    it(`does not read a cache when ${what} is group- or other-writable`, function () {
      if (!onPosix) this.skip();
      run(cli, ['--version'], work, { HOME: home });
      assert.equal(caches(folder, 'cli-main.js').length, 1);
      const target = path.join(home, ...dir);
      for (const mode of [0o770, 0o707]) {
        fs.chmodSync(target, mode);
        const ran = run(cli, ['--version'], work, { HOME: home });
        assert.deepEqual(ran.cache, ['off (the cache folder is not private to this user)'], `mode ${mode.toString(8)}`);
        assert.equal(ran.status, 0);
      }
      fs.chmodSync(target, 0o700);
      assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['accepted']);
    });

  it('does not read a cache from a folder or a file of another user', function () {
    if (!onPosix || process.geteuid!() !== 0) this.skip(); // only root can give a file to someone else
    run(cli, ['--version'], work, { HOME: home });
    const [file] = caches(folder, 'cli-main.js');
    fs.chownSync(folder, 4242, 4242);
    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['off (the cache folder is not private to this user)']);
    fs.chownSync(folder, 0, 0);
    fs.chownSync(path.join(folder, file), 4242, 4242);
    const ran = run(cli, ['--version'], work, { HOME: home });
    assert.deepEqual(ran.cache, ['absent', 'written'], "another user's file is treated as no cache and replaced");
    assert.equal(fs.statSync(path.join(folder, file)).uid, 0);
  });

  it('does not follow a symbolic link in place of the cache file', function () {
    if (!onPosix) this.skip();
    run(cli, ['--version'], work, { HOME: home });
    const [file] = caches(folder, 'cli-main.js');
    const elsewhere = path.join(tmp.path, 'planted.v8');
    fs.renameSync(path.join(folder, file), elsewhere);
    fs.symlinkSync(elsewhere, path.join(folder, file));
    assert.deepEqual(run(cli, ['--version'], work, { HOME: home }).cache, ['absent', 'written']);
    assert.equal(fs.lstatSync(path.join(folder, file)).isSymbolicLink(), false, 'replaced by a file of its own');
  });

  it('runs without dist/code-cache.js beside it (a packaging slip costs speed, never a hook)', () => {
    const bare = path.join(tmp.path, 'bare');
    fs.mkdirSync(bare);
    for (const file of ['cli.js', 'cli-main.js']) fs.copyFileSync(path.join(path.dirname(cli), file), path.join(bare, file));
    const withCache = run(cli, ['--version'], work, { HOME: home });
    const without = run(path.join(bare, 'cli.js'), ['--version'], work, { HOME: home });
    assert.deepEqual([without.status, without.stdout, without.cache], [0, withCache.stdout, []]);
  });

  it('requires a bundle that may import() instead of compiling it through the cache', () => {
    // On Node 20 a function compiled from the cache cannot import(): such a bundle is loaded by require.
    const copy = path.join(tmp.path, 'copy');
    fs.mkdirSync(copy);
    for (const file of ['cli.js', 'code-cache.js']) fs.copyFileSync(path.join(path.dirname(cli), file), path.join(copy, file));
    const bundle = fs.readFileSync(path.join(path.dirname(cli), 'cli-main.js'), 'utf8');
    fs.writeFileSync(path.join(copy, 'cli-main.js'), `${bundle}\nvoid (() => import('node:os'));\n`);
    const ran = run(path.join(copy, 'cli.js'), ['--version'], work, { HOME: home });
    assert.deepEqual([ran.status, ran.cache], [0, ['off (the bundle may import())']]);
    assert.equal(caches(folder, 'cli-main.js').length, 0);
  });

  it('uses no cache without a home, and XDG_CACHE_HOME for commands but not for the server guard', () => {
    const homeless = run(cli, ['--version'], work, { HOME: undefined });
    assert.deepEqual([homeless.status, homeless.cache], [0, ['off (no home of this user)']]);

    const xdg = path.join(tmp.path, 'xdg');
    fs.mkdirSync(xdg, { mode: 0o700 });
    run(cli, ['--version'], work, { HOME: home, XDG_CACHE_HOME: xdg });
    assert.equal(caches(path.join(xdg, 'lockstep', 'v8'), 'cli-main.js').length, 1, 'a command caches under XDG_CACHE_HOME');
    assert.equal(caches(folder, 'cli-main.js').length, 0);

    // The server guard may inherit the pusher's environment (a local-path remote): only HOME counts, and it
    // ignores LOCKSTEP_* (no debug line, LOCKSTEP_NO_CODE_CACHE neither).
    const settings = path.join(tmp.path, 'lockstep-server.json');
    const guardArgs = ['guard', 'pre-receive', '--settings', settings];
    const guard = run(cli, guardArgs, work, { HOME: home, XDG_CACHE_HOME: xdg, LOCKSTEP_NO_CODE_CACHE: '1' });
    assert.deepEqual(guard.cache, []);
    assert.equal(caches(folder, 'guard-main.js').length, 1, "the server guard caches under its user's HOME");
    assert.equal(caches(path.join(xdg, 'lockstep', 'v8'), 'guard-main.js').length, 0);
    fs.rmSync(path.join(home, '.cache'), { recursive: true });
    fs.rmSync(xdg, { recursive: true });
    const noHome = run(cli, guardArgs, work, { HOME: undefined, XDG_CACHE_HOME: xdg });
    assert.deepEqual([noHome.status, noHome.stdout, noHome.stderr], [guard.status, guard.stdout, guard.stderr]);
    assert.deepEqual([fs.existsSync(path.join(home, '.cache')), fs.existsSync(xdg)], [false, false], 'no cache without HOME');
  });
});

describe("code cache of the command line on Node >= 22.1 (Node's own compile cache, kept in the private folder)", function () {
  this.timeout(360_000);
  const tmp = useTempDir('lockstep-code-cache-22');
  let cli: string;
  let node: string;
  let home: string;
  let work: string;
  let folder: string;
  /** Node's cache files: node/<its version and flags>/<one per module>. */
  const nodeFiles = () => {
    const root = path.join(folder, 'node');
    if (!fs.existsSync(root)) return [];
    return fs.readdirSync(root).flatMap(v => fs.readdirSync(path.join(root, v)).map(f => path.join(root, v, f)));
  };
  const run22 = (env: Record<string, string | undefined> = {}) =>
    run(cli, ['--version'], work, { HOME: home, TMPDIR: tmp.path, ...env }, node);

  before(async function () {
    const found = nodeWithCompileCache();
    if ('missing' in found) {
      if (inCi()) throw new Error(`${found.missing}; in CI the launcher's branch for Node >= 22.1 must be tested.`);
      console.log(`\n!!!!!!!! SKIPPED: ${found.missing} — the code cache on Node >= 22.1 was not tested !!!!!!!!\n`);
      this.skip();
    }
    node = found.node;
    cli = await cliPath();
  });
  beforeEach(() => {
    home = path.join(tmp.path, 'home');
    work = path.join(tmp.path, 'work');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.mkdirSync(work);
    folder = path.join(home, '.cache', 'lockstep', 'v8');
  });

  it("gives Node the private folder, never the temporary one (Node's default), and the command is the same with and without", () => {
    const first = run22();
    assert.deepEqual(first.cache, ["node's own: on, in the private folder"]);
    assert.ok(nodeFiles().length > 0, `Node wrote its cache below ${folder}`);
    if (onPosix) assert.equal(fs.statSync(folder).mode & 0o777, 0o700);
    assert.ok(!fs.readdirSync(tmp.path).some(name => name.includes('compile-cache')), 'nothing in the temporary folder');
    const again = run22();
    assert.deepEqual(again.cache, ["node's own: on, in the private folder"]);
    const without = run22({ LOCKSTEP_NO_CODE_CACHE: '1' });
    assert.deepEqual(without.cache, ['off (LOCKSTEP_NO_CODE_CACHE)']);
    assert.deepEqual([again.status, again.stdout, again.stderr], [first.status, first.stdout, first.stderr]);
    assert.deepEqual([without.status, without.stdout, without.stderr], [first.status, first.stdout, first.stderr]);
  });

  it('gives Node no folder when the cache folder is group- or other-writable', function () {
    if (!onPosix) this.skip();
    run22();
    fs.chmodSync(folder, 0o770);
    const ran = run22();
    assert.deepEqual([ran.status, ran.cache], [0, ['off (the cache folder is not private to this user)']]);
    assert.ok(
      !fs.readdirSync(tmp.path).some(name => name.includes('compile-cache')),
      'and Node does not fall back to the temporary folder',
    );
  });

  it("keeps Node's cache as the user's umask made it (002: group-writable files) inside the shut cache folder", function () {
    if (!onPosix) this.skip();
    run22();
    const [file] = nodeFiles();
    fs.chmodSync(path.dirname(file), 0o775);
    fs.chmodSync(file, 0o664);
    const ran = run22();
    assert.deepEqual([ran.status, ran.cache], [0, ["node's own: on, in the private folder"]], 'not removed at every run');
    assert.ok(fs.existsSync(file), 'the same cache file is used');
  });

  it("removes Node's cache when someone else could have written it, and Node writes it anew", function () {
    if (!onPosix) this.skip();
    const root = path.join(folder, 'node');
    const plantings: [string, () => void][] = [
      [
        'the cache folder open to others (0755: nobody else can write it, but anyone can reach below it)',
        () => fs.chmodSync(folder, 0o755),
      ],
      [
        'a symbolic link in place of a file',
        () => {
          const [file] = nodeFiles();
          fs.renameSync(file, `${file}.elsewhere`);
          fs.symlinkSync(`${file}.elsewhere`, file);
        },
      ],
      [
        'a symbolic link in place of its folder',
        () => {
          fs.renameSync(root, `${root}.elsewhere`);
          fs.symlinkSync(`${root}.elsewhere`, root);
        },
      ],
    ];
    if (process.geteuid!() === 0) {
      plantings.push(['a file of another user', () => fs.chownSync(nodeFiles()[0], 4242, 4242)]);
      plantings.push(['a folder of another user', () => fs.chownSync(path.dirname(nodeFiles()[0]), 4242, 4242)]);
    }
    for (const [what, plant] of plantings) {
      run22();
      plant();
      const ran = run22();
      assert.deepEqual(
        [ran.status, ran.cache],
        [0, ["removed (Node's own cache could have been written by someone else)", "node's own: on, in the private folder"]],
        what,
      );
      assert.equal(fs.statSync(folder).mode & 0o777, 0o700, `${what}: the cache folder is shut`);
      assert.ok(!fs.lstatSync(root).isSymbolicLink(), `${what}: Node's folder is a folder again`);
      for (const file of nodeFiles()) {
        const stats = fs.lstatSync(file);
        assert.ok(stats.isFile() && stats.uid === process.geteuid!(), `${what}: ${file} is the user's own file`);
      }
      fs.rmSync(`${root}.elsewhere`, { recursive: true, force: true });
    }
  });
});
