import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CHAINED_SUFFIX,
  HOOK_MARKER,
  NODE_CODE_VARIABLES,
  preReceiveHook,
  prePushHook,
  type HookPaths,
} from '../../src/core/hooks/hookScripts';
import { useTempDir } from '../helpers/tempDir';

/**
 * The hook texts are pure (paths in, script out); these tests read them and also run them with
 * /bin/sh against a stand-in CLI that records its arguments, standard input and environment, so
 * that quoting, chaining, exit codes and the choice of node are checked as a shell sees them.
 */

const STAND_IN_CLI = `
const fs = require('node:fs');
const input = fs.readFileSync(0, 'utf8');
fs.appendFileSync(process.env.RECORD, JSON.stringify({ argv: process.argv.slice(2), input, lockstepPath: process.env.LOCKSTEP_PATH ?? null, path: process.env.PATH, pushPid: process.env.LOCKSTEP_GIT_PUSH_PID ?? null, env: process.env }) + '\\n');
process.exit(Number(process.env.GUARD_EXIT ?? 0));
`;

/** A chained (pre-existing) hook that records its arguments and input, then exits with CHAINED_EXIT. */
const CHAINED_HOOK = `#!/bin/sh
input=$(cat)
printf 'chained %s|%s|%s\\n' "$1" "$2" "$input" >> "$RECORD.chained"
exit "\${CHAINED_EXIT:-0}"
`;

interface Ran {
  status: number | null;
  stderr: string;
  guard: {
    argv: string[];
    input: string;
    lockstepPath: string | null;
    path: string;
    pushPid: string | null;
    env: Record<string, string>;
  }[];
  chained: string[];
}

/** The server hook's paths for a test: the pinned settings file and the PATH of the installing shell. */
const serverPaths = (paths: HookPaths, settings = '/srv/remote.git/hooks/lockstep-server.json') => ({
  ...paths,
  settings,
  path: process.env.PATH ?? '',
  protectedBranches: ['main', 'release/1.x'],
});

describe('hook scripts (text and shell behaviour)', () => {
  const tmp = useTempDir('lockstep-hooks');

  /** Writes `text` as an executable hook in a folder whose name needs quoting, with a stand-in CLI beside it. */
  function setUp(
    name: string,
    text: (cli: string) => string,
    options: { chained?: boolean } = {},
  ): { hook: string; record: string; cli: string } {
    const dir = path.join(tmp.path, `it's a "hooks" $HOME dir`);
    fs.mkdirSync(dir, { recursive: true });
    const cli = path.join(dir, 'cli `x`.js');
    fs.writeFileSync(cli, STAND_IN_CLI);
    const hook = path.join(dir, name);
    fs.writeFileSync(hook, text(cli), { mode: 0o755 });
    if (options.chained) fs.writeFileSync(hook + CHAINED_SUFFIX, CHAINED_HOOK, { mode: 0o755 });
    // The hooks run in tmp.path: a container whose protected branch is main.
    fs.writeFileSync(
      path.join(tmp.path, '.lockstep.json'),
      JSON.stringify({ container: 'demo', remote: 'origin', protectedBranches: ['main'] }, null, 2),
    );
    return { hook, record: path.join(tmp.path, 'record.jsonl'), cli };
  }

  function run(hook: string, args: string[], input: string, env: Record<string, string>, cwd = tmp.path, timeout?: number): Ran {
    const record = path.join(tmp.path, 'record.jsonl');
    const done = spawnSync(hook, args, {
      input,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', RECORD: record, ...env },
      cwd,
      ...(timeout ? { timeout } : {}),
    });
    const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
    return { status: done.status, stderr: done.stderr, guard: read(record).map(l => JSON.parse(l)), chained: read(`${record}.chained`) };
  }

  /** A PATH with the tools the hooks use (sh, cat, dirname, git, node) except `missing`. */
  function pathWithout(missing: 'node' | 'git'): string {
    const bin = path.join(tmp.path, `bin-without-${missing}`);
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ['sh', 'cat', 'dirname', 'git', 'node', 'wc'].filter(t => t !== missing)) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (!fs.existsSync(path.join(bin, tool))) fs.symlinkSync(found, path.join(bin, tool));
    }
    assert.notEqual(spawnSync('sh', ['-c', `command -v ${missing}`], { env: { PATH: bin } }).status, 0, `${missing} is not on this PATH`);
    return bin;
  }
  const pathWithoutNode = () => pathWithout('node');

  const REFS =
    'refs/heads/main 1111111111111111111111111111111111111111 refs/heads/main 2222222222222222222222222222222222222222\n' +
    'refs/heads/feature 3333333333333333333333333333333333333333 refs/heads/feature 0000000000000000000000000000000000000000\n';

  describe('texts', () => {
    const paths = { node: '/opt/node 20/bin/node', cli: "/srv/lock'step/dist/cli.js" };

    it('are POSIX sh scripts carrying the marker that install uses to recognise its own hooks', () => {
      for (const text of [prePushHook(paths), preReceiveHook(serverPaths(paths))]) {
        assert.ok(text.startsWith(`#!/bin/sh\n${HOOK_MARKER}\n`));
        const syntax = spawnSync('sh', ['-n'], { input: text, encoding: 'utf8' });
        assert.equal(syntax.status, 0, syntax.stderr);
      }
    });

    it("embed the install-time paths single-quoted, and pass the guard only git's own arguments", () => {
      const push = prePushHook(paths);
      assert.ok(push.includes(`node_bin='/opt/node 20/bin/node'`));
      assert.ok(push.includes(`cli=\${LOCKSTEP_CLI:-'/srv/lock'\\''step/dist/cli.js'}`));
      assert.match(push, /"\$node_bin" "\$cli" guard pre-push "\$@"\n$/);
      assert.match(
        preReceiveHook(serverPaths(paths)),
        /"\$node_bin" "\$cli" guard pre-receive --settings '\/srv\/remote\.git\/hooks\/lockstep-server\.json'\n$/,
      );
    });
  });

  describe('pre-push, run by sh', () => {
    it("hands the guard git's arguments and the refs unchanged, with paths that need quoting", () => {
      const { hook } = setUp('pre-push', cli => prePushHook({ node: process.execPath, cli }));
      const ran = run(hook, ['origin', '/srv/remote.git'], REFS, {});
      assert.equal(ran.status, 0, ran.stderr);
      assert.equal(ran.guard.length, 1);
      assert.deepEqual(ran.guard[0].argv, ['guard', 'pre-push', 'origin', '/srv/remote.git']);
      assert.equal(ran.guard[0].input, REFS);
      assert.equal(ran.guard[0].pushPid, String(process.pid), 'the process that ran the hook (git push) is named for the guard');
    });

    it("the guard's refusal (non-zero exit) is the hook's exit", () => {
      const { hook } = setUp('pre-push', cli => prePushHook({ node: process.execPath, cli }));
      assert.equal(run(hook, ['origin', 'url'], REFS, { GUARD_EXIT: '1' }).status, 1);
    });

    it('a chained hook runs first with the same arguments and input; its failure stops the push before the guard', () => {
      const { hook } = setUp('pre-push', cli => prePushHook({ node: process.execPath, cli }), { chained: true });
      const passed = run(hook, ['origin', 'url'], REFS, {});
      assert.equal(passed.status, 0, passed.stderr);
      assert.deepEqual(passed.chained, [`chained origin|url|${REFS.trimEnd().split('\n')[0]}`, REFS.trimEnd().split('\n')[1]]);
      assert.equal(passed.guard.length, 1, 'then the guard ran');
      const failed = run(hook, ['origin', 'url'], REFS, { CHAINED_EXIT: '7' });
      assert.equal(failed.status, 7, "the chained hook's exit code");
      assert.equal(failed.guard.length, 1, 'the guard did not run again');
    });

    it('uses the install-time node when node is not on PATH', () => {
      const { hook } = setUp('pre-push', cli => prePushHook({ node: process.execPath, cli }));
      const ran = run(hook, ['origin', 'url'], REFS, { PATH: pathWithoutNode() });
      assert.equal(ran.status, 0, ran.stderr);
      assert.equal(ran.guard.length, 1);
    });

    it('refuses the push (fail closed) when no node can be found at all, and says what to do', () => {
      const { hook } = setUp('pre-push', cli => prePushHook({ node: path.join(tmp.path, 'no', 'node'), cli }));
      const ran = run(hook, ['origin', 'url'], REFS, { PATH: pathWithoutNode() });
      assert.equal(ran.status, 1);
      assert.equal(ran.guard.length, 0);
      assert.match(
        ran.stderr,
        /lockstep: node was not found, so the fencing guard cannot run and the push is refused\. Install Node\.js or run lockstep hooks install again\./,
      );
    });
  });

  describe('pre-push: pushes that cannot concern the guard start no node', () => {
    const FEATURE =
      'refs/heads/feature 3333333333333333333333333333333333333333 refs/heads/feature 0000000000000000000000000000000000000000\n' +
      'refs/tags/v1 4444444444444444444444444444444444444444 refs/tags/v1 0000000000000000000000000000000000000000\n';
    const hookInClone = () => {
      const set = setUp('pre-push', cli => prePushHook({ node: process.execPath, cli }));
      fs.mkdirSync(path.join(tmp.path, '.git', 'lockstep'), { recursive: true });
      return set.hook;
    };

    it('a push of unprotected branches and tags from a clone without a push proof passes without the guard', () => {
      const ran = run(hookInClone(), ['origin', 'url'], FEATURE, {});
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(ran.guard, []);
    });

    it('a folder that is no container passes without the guard, as the guard itself would', () => {
      const hook = hookInClone();
      fs.rmSync(path.join(tmp.path, '.lockstep.json'));
      assert.deepEqual(run(hook, ['origin', 'url'], REFS, {}).guard, []);
    });

    it('a clone that holds a push proof runs the guard on a branch without .lockstep.json (where would the proof go?)', () => {
      const hook = hookInClone();
      fs.rmSync(path.join(tmp.path, '.lockstep.json'));
      fs.mkdirSync(path.join(tmp.path, '.git', 'lockstep'), { recursive: true });
      fs.writeFileSync(path.join(tmp.path, '.git', 'lockstep', 'push.config'), '[push]\n');
      assert.equal(run(hook, ['elsewhere', 'url'], FEATURE, {}).guard.length, 1);
    });

    it('the guard runs when a protected branch is pushed, even under another local name', () => {
      const ran = run(
        hookInClone(),
        ['origin', 'url'],
        'refs/heads/topic 1111111111111111111111111111111111111111 refs/heads/main 2222222222222222222222222222222222222222\n',
        {},
      );
      assert.equal(ran.guard.length, 1);
    });

    it('the guard runs on any push while the clone holds a push proof (it checks where the proof would go)', () => {
      const hook = hookInClone();
      fs.writeFileSync(path.join(tmp.path, '.git', 'lockstep', 'push.config'), '[push]\n');
      assert.equal(run(hook, ['elsewhere', 'url'], FEATURE, {}).guard.length, 1);
    });

    it("the guard runs when .lockstep.json lacks the key every container's file has (empty, garbled), which it refuses", () => {
      for (const text of ['', '{bad', '{"container":"demo"}']) {
        const hook = hookInClone();
        fs.rmSync(path.join(tmp.path, 'record.jsonl'), { force: true });
        fs.writeFileSync(path.join(tmp.path, '.lockstep.json'), text);
        assert.equal(run(hook, ['origin', 'url'], FEATURE, {}).guard.length, 1, JSON.stringify(text));
      }
    });

    it('the guard runs when .lockstep.json holds a JSON escape, which could spell a protected name', () => {
      const hook = hookInClone();
      fs.writeFileSync(
        path.join(tmp.path, '.lockstep.json'),
        '{"container":"demo","remote":"origin","protectedBranches":["\\u0066eature"]}',
      );
      assert.equal(run(hook, ['origin', 'url'], FEATURE, {}).guard.length, 1);
    });

    // Issue #24: the search is bounded. Each hook below is bounded by its process finishing (spawnSync's
    // timeout only stops a hang from holding up the suite); then the guard, which refuses such a file, runs.
    const finishes = (hook: string, input: string): Ran => {
      const ran = run(hook, ['origin', 'url'], input, {}, tmp.path, 120_000);
      assert.notEqual(ran.status, null, 'the hook finished (it was not stopped)');
      return ran;
    };

    it('a .lockstep.json that is a symbolic link (to /dev/zero, which never ends) is not read: the guard runs', () => {
      const hook = hookInClone();
      fs.rmSync(path.join(tmp.path, '.lockstep.json'));
      fs.symlinkSync('/dev/zero', path.join(tmp.path, '.lockstep.json'));
      assert.equal(finishes(hook, FEATURE).guard.length, 1);
    });

    it('a symbolic link to a harmless file, and a dangling one, are not followed either', () => {
      const hook = hookInClone();
      const target = path.join(tmp.path, 'settings.json');
      fs.renameSync(path.join(tmp.path, '.lockstep.json'), target);
      fs.symlinkSync(target, path.join(tmp.path, '.lockstep.json'));
      assert.equal(finishes(hook, FEATURE).guard.length, 1, 'a link to a file');
      fs.rmSync(target);
      assert.equal(finishes(hook, FEATURE).guard.length, 2, 'a dangling link');
    });

    it('a 1.7 MB .lockstep.json (quadratic to search, 30 s before) goes to the guard unread, and so does one of many short lines', () => {
      const hook = hookInClone();
      const file = path.join(tmp.path, '.lockstep.json');
      fs.writeFileSync(file, JSON.stringify({ container: 'demo', protectedBranches: ['main'], pad: 'x'.repeat(1_700_000) }));
      assert.equal(finishes(hook, FEATURE).guard.length, 1, 'one long line');
      fs.writeFileSync(file, JSON.stringify({ container: 'demo', protectedBranches: ['main'], pad: Array(3000).fill('') }, null, 1));
      assert.equal(finishes(hook, FEATURE).guard.length, 2, 'a small file of 3000 lines');
    });

    it('a FIFO named .lockstep.json is not opened: the guard runs', function () {
      const hook = hookInClone();
      fs.rmSync(path.join(tmp.path, '.lockstep.json'));
      if (spawnSync('mkfifo', [path.join(tmp.path, '.lockstep.json')]).status !== 0) this.skip();
      assert.equal(finishes(hook, FEATURE).guard.length, 1);
    });
  });

  describe('pre-receive: pushes that cannot concern the guard start no node', () => {
    const FEATURE = '2222222222222222222222222222222222222222 1111111111111111111111111111111111111111 refs/heads/feature\n';
    /** A bare repository with the hook and (unless told) its pinned settings file. */
    const bareWithHook = (options: { settings?: boolean } = {}) => {
      const remote = path.join(tmp.path, 'remote.git');
      assert.equal(spawnSync('git', ['init', '--quiet', '--bare', remote]).status, 0);
      const settings = path.join(remote, 'hooks', 'lockstep-server.json');
      if (options.settings !== false) fs.writeFileSync(settings, '{}');
      const { hook } = setUp('pre-receive', cli => preReceiveHook(serverPaths({ node: process.execPath, cli }, settings)));
      return { remote, hook };
    };

    it('an update of an unprotected branch passes without the guard', () => {
      const { remote, hook } = bareWithHook();
      const ran = run(hook, [], FEATURE, {}, remote);
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(ran.guard, []);
    });

    for (const ref of ['refs/heads/main', 'refs/heads/release/1.x', 'refs/lockstep/abc/records/def']) {
      it(`the guard runs for ${ref} (a pinned protected branch or a lock ref)`, () => {
        const { remote, hook } = bareWithHook();
        assert.equal(
          run(hook, [], `${FEATURE}2222222222222222222222222222222222222222 1111111111111111111111111111111111111111 ${ref}\n`, {}, remote)
            .guard.length,
          1,
        );
      });
    }

    it('the guard runs for a pushed ref that is a symbolic ref on the server, dangling or not (an alias may lead to a protected branch)', () => {
      const { remote, hook } = bareWithHook();
      const git = (...args: string[]) =>
        spawnSync('git', args, {
          cwd: remote,
          encoding: 'utf8',
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 't',
            GIT_AUTHOR_EMAIL: 't@example.com',
            GIT_COMMITTER_NAME: 't',
            GIT_COMMITTER_EMAIL: 't@example.com',
          },
        });
      const tree = git('hash-object', '-w', '-t', 'tree', '/dev/null').stdout.trim();
      assert.equal(git('update-ref', 'refs/heads/main', git('commit-tree', tree, '-m', 'first').stdout.trim()).status, 0);
      assert.equal(git('symbolic-ref', 'refs/heads/trunk', 'refs/heads/main').status, 0);
      assert.equal(run(hook, [], FEATURE, {}, remote).guard.length, 0, 'a push that names no alias starts no Node');
      const toTrunk = '2222222222222222222222222222222222222222 1111111111111111111111111111111111111111 refs/heads/trunk\n';
      assert.equal(run(hook, [], toTrunk, {}, remote).guard.length, 1, 'a push to the alias runs the guard');
      // An alias whose target does not exist yet (git for-each-ref does not list it): a push to it would create the target.
      assert.equal(git('symbolic-ref', 'refs/heads/rc', 'refs/heads/release/2.x').status, 0);
      const toRc = '0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 refs/heads/rc\n';
      assert.equal(
        run(hook, [], toRc, {}, remote).guard.length,
        2,
        'a push to a dangling alias runs the guard too (the record keeps every run)',
      );
    });

    it('every push is refused, saying so, when git cannot answer (no git on the pinned PATH): the alias check must not count as "no alias"', () => {
      const { remote } = bareWithHook();
      const settings = path.join(remote, 'hooks', 'lockstep-server.json');
      // The PATH pinned at install time finds no git: the alias check cannot be made, so it must not count as "no alias".
      const { hook } = setUp('pre-receive', cli =>
        preReceiveHook({ ...serverPaths({ node: process.execPath, cli }, settings), path: pathWithout('git') }),
      );
      const ran = run(hook, [], FEATURE, {}, remote);
      assert.equal(ran.status, 1, 'refused');
      assert.match(ran.stderr, /git cannot be found on the PATH this guard was installed with .*Run lockstep hooks install --server again/);
    });

    it('on Windows: a pinned PATH in Windows form (which sh cannot search) refuses every push and shows that PATH as it is', () => {
      const { remote } = bareWithHook();
      const settings = path.join(remote, 'hooks', 'lockstep-server.json');
      const windowsPath = 'C:\\Program Files\\Git\\cmd;C:\\Windows\\system32';
      const { hook } = setUp('pre-receive', cli =>
        preReceiveHook({ ...serverPaths({ node: process.execPath, cli }, settings), path: windowsPath }),
      );
      const ran = run(hook, [], FEATURE, {}, remote);
      assert.equal(ran.status, 1, 'refused');
      assert.deepEqual(ran.guard, [], 'refused by sh, before the fast path could read a failure as "no alias"');
      assert.ok(ran.stderr.includes(`installed with (${windowsPath})`), ran.stderr);
    });

    it('the guard runs when git fails in the repository (exit 128), as when it answers "alias"', () => {
      const { hook } = bareWithHook();
      // Run outside any repository: git symbolic-ref exits 128.
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-hooks-outside-'));
      try {
        assert.equal(run(hook, [], FEATURE, {}, outside).guard.length, 1);
      } finally {
        fs.rmSync(outside, { recursive: true, force: true });
      }
    });

    it('the guard runs (and so refuses) when the pinned settings are missing', () => {
      const { remote, hook } = bareWithHook({ settings: false });
      assert.equal(run(hook, [], FEATURE, {}, remote).guard.length, 1);
    });
  });

  describe('pre-receive, run by sh', () => {
    it("hands the guard the pinned settings file and the install-time PATH, whatever the pusher's PATH and LOCKSTEP_* say", () => {
      const pinnedPath = process.env.PATH ?? '';
      const { hook } = setUp('pre-receive', cli => preReceiveHook(serverPaths({ node: process.execPath, cli })));
      const input = '2222222222222222222222222222222222222222 1111111111111111111111111111111111111111 refs/heads/main\n';
      const ran = run(hook, [], input, { PATH: `${pathWithoutNode()}:/pusher/bin`, LOCKSTEP_PATH: '/somewhere/the/pusher/chose' });
      assert.equal(ran.status, 0, ran.stderr);
      assert.deepEqual(ran.guard[0].argv, ['guard', 'pre-receive', '--settings', '/srv/remote.git/hooks/lockstep-server.json']);
      assert.equal(ran.guard[0].input, input);
      assert.equal(ran.guard[0].path, pinnedPath, "the pusher's PATH does not reach the guard");
    });

    it("clears NODE_OPTIONS and the other variables that would make the guard's node run other code (the pusher's environment reaches the hook over a path)", () => {
      const { hook } = setUp('pre-receive', cli => preReceiveHook(serverPaths({ node: process.execPath, cli })));
      const evil = path.join(tmp.path, 'evil.js');
      const marker = path.join(tmp.path, 'evil-ran');
      fs.writeFileSync(evil, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`);
      const input = '2222222222222222222222222222222222222222 1111111111111111111111111111111111111111 refs/heads/main\n';
      const hostile = Object.fromEntries(
        NODE_CODE_VARIABLES.map(name => [name, name === 'NODE_OPTIONS' ? `--require=${evil}` : path.join(tmp.path, 'nowhere')]),
      );
      const ran = run(hook, [], input, { ...hostile, NODE_EXTRA_CA_CERTS: path.join(tmp.path, 'nowhere.pem') });
      assert.equal(ran.guard.length, 1, ran.stderr);
      assert.equal(fs.existsSync(marker), false, 'evil.js never ran');
      const seen = ran.guard[0].env;
      for (const name of NODE_CODE_VARIABLES) assert.equal(seen[name], undefined, `${name} is cleared`);
    });

    it('chains a previous pre-receive hook the same way; its refusal stands', () => {
      const { hook } = setUp('pre-receive', cli => preReceiveHook(serverPaths({ node: process.execPath, cli })), { chained: true });
      const ran = run(hook, [], 'a b refs/heads/main\n', { CHAINED_EXIT: '3' });
      assert.equal(ran.status, 3);
      assert.equal(ran.guard.length, 0);
      assert.deepEqual(ran.chained, ['chained ||a b refs/heads/main']);
    });
  });

  for (const [name, text] of [
    ['pre-push', prePushHook],
    ['pre-receive', (paths: HookPaths) => preReceiveHook(serverPaths(paths))],
  ] as const) {
    it(`${name}: a CLI that is gone (the extension was updated) refuses with a message that says what to do`, () => {
      const { hook, cli } = setUp(name, c => text({ node: process.execPath, cli: c }));
      fs.rmSync(cli);
      const ran = run(hook, ['origin', 'url'], 'refs/heads/main a refs/heads/main b', {});
      assert.equal(ran.status, 1);
      assert.match(ran.stderr, /command line .* is gone .*the push is refused\. Run lockstep hooks install again/);
      assert.deepEqual(ran.guard, []);
    });
  }
});
