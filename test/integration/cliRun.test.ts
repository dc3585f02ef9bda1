import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createLockManager } from '../../src/core/leases';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { FILE_LEASE_SLOTS } from '../../src/core/stores/file';
import { slotOf } from '../../src/core/stores/leaseSlots';
import { childEnv, fileDriverEnv, firstJsonLine, killHard, runTs, spawnTs, type Finished } from '../helpers/children';
import { useTempDir } from '../helpers/tempDir';

/**
 * `lockstep run NAME [--ttl S] [--wait S] [--json] -- CMD ARG…` as a real process (tsx on
 * src/cli/main.ts, so no build is needed), on the file driver in a private temporary store.
 * Every output of every invocation is kept and checked at the end: no owner token (nor any other
 * 64-hex secret such as its hash) ever appears.
 */
describe('lockstep run (command line, real processes)', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-cli', 'suite');
  const outputs: string[] = [];
  const PREFIX = 'cli';
  const env = (extra: Record<string, string> = {}) => childEnv({ ...fileDriverEnv(path.join(tmp.path, 'store'), PREFIX), ...extra });

  async function lockstep(args: string[], extra: Record<string, string> = {}): Promise<Finished> {
    const done = await runTs('src/cli/main.ts', args, env(extra), 60_000);
    outputs.push(done.stdout, done.stderr);
    return done;
  }

  /** Runs CMD through node, so that the test does not depend on a shell's quirks. */
  const nodeCmd = (code: string) => ['--', process.execPath, '-e', code];

  describe('exit codes', () => {
    it("passes CMD's status through: 0", async () => {
      const r = await lockstep(['run', 'status-zero', ...nodeCmd('process.exit(0)')]);
      assert.equal(r.code, 0, r.stderr);
    });

    it("passes CMD's status through: 7, and releases the lease", async () => {
      const r = await lockstep(['run', 'status-seven', ...nodeCmd('process.exit(7)')]);
      assert.equal(r.code, 7, r.stderr);
      const again = await lockstep(['run', 'status-seven', ...nodeCmd('process.exit(0)')]);
      assert.equal(again.code, 0, 'the lease was released after CMD failed');
    });

    it('reports a CMD killed by a signal as 128 + the signal number', async () => {
      const r = await lockstep(['run', 'signalled', ...nodeCmd('process.kill(process.pid, "SIGTERM")')]);
      assert.equal(r.code, 128 + 15);
    });

    it('exits 3 when the lease stays busy, without running CMD', async () => {
      const holder = spawnTs('test/helpers/holdWorker.ts', ['--name', 'busy-name', '--ttl', '60'], env());
      try {
        assert.equal((await firstJsonLine<{ acquired: boolean }>(holder)).acquired, true);
        const marker = path.join(tmp.path, 'busy-ran');
        for (const wait of [[], ['--wait', '0.3']]) {
          const r = await lockstep(['run', 'busy-name', ...wait, ...nodeCmd(`require("fs").writeFileSync(${JSON.stringify(marker)}, "")`)]);
          assert.equal(r.code, 3, r.stderr);
          assert.match(r.stderr, /busy/i);
        }
        assert.equal(fs.existsSync(marker), false, 'CMD ran although the lease was busy');
        const json = await lockstep(['run', 'busy-name', '--json', ...nodeCmd('0')]);
        assert.equal(json.code, 3);
        assert.deepEqual(JSON.parse(json.stdout), {
          ok: false,
          exitCode: 3,
          error: { code: 'busy', message: JSON.parse(json.stdout).error.message },
        });
      } finally {
        await killHard(holder);
      }
    });

    const badArguments: [string, string[]][] = [
      ['no -- before CMD', ['run', 'bad-args', process.execPath]],
      ['nothing after --', ['run', 'bad-args', '--']],
      ['no name', ['run', ...nodeCmd('0')]],
      ['two names', ['run', 'one', 'two', ...nodeCmd('0')]],
      ['an unknown option', ['run', 'bad-args', '--bogus', ...nodeCmd('0')]],
      ['a TTL that is not a number', ['run', 'bad-args', '--ttl', 'abc', ...nodeCmd('0')]],
      ['a TTL of 0', ['run', 'bad-args', '--ttl', '0', ...nodeCmd('0')]],
      ['a TTL of 0.999', ['run', 'bad-args', '--ttl', '0.999', ...nodeCmd('0')]],
      ['a fractional TTL (1.5): whole seconds only', ['run', 'bad-args', '--ttl', '1.5', ...nodeCmd('0')]],
      ['a fractional TTL (30.5)', ['run', 'bad-args', '--ttl', '30.5', ...nodeCmd('0')]],
      ['a TTL of 86401', ['run', 'bad-args', '--ttl', '86401', ...nodeCmd('0')]],
      ['a wait of 60.01', ['run', 'bad-args', '--wait', '60.01', ...nodeCmd('0')]],
      ['a negative wait', ['run', 'bad-args', '--wait=-1', ...nodeCmd('0')]],
      ['a name with a slash', ['run', 'bad/name', ...nodeCmd('0')]],
      ['a name with a space', ['run', 'bad name', ...nodeCmd('0')]],
      ['an unknown command', ['rnu', 'x', ...nodeCmd('0')]],
      ['a CMD that does not exist', ['run', 'bad-args', '--', '/nonexistent-lockstep-dir/no-such-program']],
    ];
    it('exits 2 for bad arguments, and runs nothing', async () => {
      // One at a time: twenty Node starts at once on a loaded 2-core machine can take longer than a child's limit.
      const runs: Awaited<ReturnType<typeof lockstep>>[] = [];
      for (const [, args] of badArguments) runs.push(await lockstep(args));
      for (const [i, [label]] of badArguments.entries()) {
        assert.equal(runs[i].code, 2, `${label}: exit ${runs[i].code}, stderr ${runs[i].stderr}`);
        assert.match(runs[i].stderr, /^lockstep: /m, `${label}: says what was wrong`);
      }
    });

    it('exits 2 for bad configuration in the environment', async () => {
      const runs = await Promise.all([
        lockstep(['run', 'cfg', ...nodeCmd('0')], { LOCKSTEP_DRIVER: 'bogus' }),
        lockstep(['run', 'cfg', ...nodeCmd('0')], { LOCKSTEP_PATH: 'relative/store' }),
        lockstep(['run', 'cfg', ...nodeCmd('0')], { LOCKSTEP_REQUIRE_DISTRIBUTED: 'true' }),
      ]);
      for (const r of runs) assert.equal(r.code, 2, r.stderr);
    });

    it('exits 5 for a damaged record, with or without --json, and never runs CMD', async () => {
      const store = path.join(tmp.path, 'store');
      const manager = createLockManager({ env: fileDriverEnv(store, PREFIX) });
      assert.equal(await (await manager.acquire('damaged-cli')).release(), true);
      await manager.close();
      // The name's lease slot (src/core/stores/leaseSlots.ts): its current log gets damaged.
      const slot = slotOf(keyDigest(PREFIX, 'damaged-cli'), FILE_LEASE_SLOTS).toString(16).padStart(2, '0');
      const dir = path.join(store, namespaceDigest(PREFIX), `s${slot}`);
      const current = fs.readdirSync(dir).sort().pop()!;
      fs.rmSync(path.join(dir, current));
      fs.writeFileSync(path.join(dir, current), 'garbage');

      const marker = path.join(tmp.path, 'damaged-ran');
      const plain = await lockstep(['run', 'damaged-cli', ...nodeCmd(`require("fs").writeFileSync(${JSON.stringify(marker)}, "")`)]);
      assert.equal(plain.code, 5, plain.stderr);
      assert.match(plain.stderr, /damaged/);
      const json = await lockstep(['--json', 'run', 'damaged-cli', ...nodeCmd('0')]);
      assert.equal(json.code, 5);
      const body = JSON.parse(json.stdout) as { ok: boolean; exitCode: number; error: { code: string } };
      assert.deepEqual([body.ok, body.exitCode, body.error.code], [false, 5, 'storage']);
      assert.equal(fs.existsSync(marker), false);
    });

    it('exits 4 when the storage folder cannot be used', async () => {
      const file = path.join(tmp.path, 'plain-file');
      fs.writeFileSync(file, '');
      const r = await lockstep(['run', 'unusable', ...nodeCmd('0')], { LOCKSTEP_PATH: path.join(file, 'store') });
      assert.equal(r.code, 4, r.stderr);
    });
  });

  describe('the lease around CMD', () => {
    it('gives CMD LOCKSTEP_FENCING_TOKEN, increasing run after run, and nothing else new in its environment', async () => {
      const tokens: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await lockstep(['run', 'fenced-cli', ...nodeCmd('process.stdout.write(JSON.stringify(process.env))')]);
        assert.equal(r.code, 0, r.stderr);
        const childEnvironment = JSON.parse(r.stdout) as Record<string, string>;
        const given = env();
        const added = Object.keys(childEnvironment).filter(k => !(k in given));
        assert.deepEqual(added, ['LOCKSTEP_FENCING_TOKEN']);
        assert.match(childEnvironment.LOCKSTEP_FENCING_TOKEN, /^[1-9]\d*$/);
        tokens.push(Number(childEnvironment.LOCKSTEP_FENCING_TOKEN));
      }
      assert.ok(tokens[0] < tokens[1] && tokens[1] < tokens[2], `tokens ${tokens.join(', ')}`);
    });

    it('holds the lease while CMD runs', async () => {
      // CMD itself tries the same name through a nested lockstep run: it must find it busy (3).
      const nested = `const r = require("child_process").spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "run", "nested", "--", process.execPath, "-e", "0"], { env: process.env }); process.exit(r.status === 3 ? 0 : 1)`;
      const r = await lockstep(['run', 'nested', ...nodeCmd(nested)]);
      assert.equal(r.code, 0, `the nested run did not find the lease busy: ${r.stderr}`);
    });
  });

  describe('output', () => {
    it('--json prints exactly one JSON object with the status, the fencing token and the release', async () => {
      for (const args of [
        ['run', 'json-out', '--json', ...nodeCmd('process.exit(7)')],
        ['--json', 'run', 'json-out', ...nodeCmd('process.exit(0)')],
      ]) {
        const r = await lockstep(args);
        const lines = r.stdout.split('\n').filter(l => l !== '');
        assert.equal(lines.length, 1, r.stdout);
        const body = JSON.parse(lines[0]) as { ok: boolean; status: number; fencingToken: number; released: boolean };
        assert.equal(body.ok, true);
        assert.equal(body.status, r.code);
        assert.ok(Number.isInteger(body.fencingToken) && body.fencingToken > 0);
        assert.equal(body.released, true);
        assert.equal(r.stderr, '');
      }
    });

    it('--json reports bad arguments as one JSON object too', async () => {
      const r = await lockstep(['--json', 'run', 'json-bad', '--ttl', 'abc', ...nodeCmd('0')]);
      assert.equal(r.code, 2);
      const body = JSON.parse(r.stdout) as { ok: boolean; exitCode: number; error: { code: string; setting?: string } };
      assert.deepEqual([body.ok, body.exitCode, body.error.code, body.error.setting], [false, 2, 'configuration', 'ttl']);
    });

    it('--help exits 0 and explains the command; no arguments exits 2', async () => {
      const [global, own, none] = await Promise.all([lockstep(['--help']), lockstep(['run', '--help']), lockstep([])]);
      assert.equal(global.code, 0);
      assert.match(global.stdout, /run\s+run a command under a plain lease/);
      assert.equal(own.code, 0);
      assert.match(own.stdout, /usage: lockstep run NAME/);
      assert.match(own.stdout, /LOCKSTEP_FENCING_TOKEN/);
      assert.equal(none.code, 2);
    });

    it('no owner token, nor any 64-hex secret, appeared in any output of this suite', () => {
      assert.ok(outputs.length >= 40, `${outputs.length / 2} invocations recorded`);
      for (const text of outputs) assert.doesNotMatch(text, /[0-9a-f]{64}/);
    });
  });
});
