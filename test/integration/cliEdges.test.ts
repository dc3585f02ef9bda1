import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container } from '../../src/core/container/container';
import { openDriver } from '../../src/core/drivers';
import type { LockRecord } from '../../src/core/lockRecord';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';

/**
 * The command line's edges (issue #23): input bounds that are usage errors (exit 2) in every command
 * that takes them, `lease-ids --json` across a gap, and a reader that goes away (`lockstep status |
 * head -1`). Real `lockstep` processes in clones of a real git repository, one shared file store.
 */
describe('CLI edges: input bounds, lease-ids across a gap, a closed stdout (real processes, real git)', function () {
  this.timeout(180_000);
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember, ben: TeamMember;
  const status = async (who: TeamMember) => expectOk(await team.cli(who, ['status']), `status of ${who.name}`);

  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ana', 'ben'], operators: [] });
    [lead, ana, ben] = team.members;
  });
  after(() => team?.dispose());

  describe('input bounds', () => {
    it("acquire --ttl: a fraction, 0, under the container's 60 s or past a day is a usage error (exit 2) naming ttl, and the lock stays free", async () => {
      for (const ttl of ['1.5', '0.5', '30.25', '0', '1', '2', '59', '59.9', '60.5', '86401']) {
        const error = expectError(await team.cli(lead, ['acquire', '--ttl', ttl]), 2, 'configuration');
        assert.equal(error.setting, 'ttl', `--ttl ${ttl}`);
        assert.match(error.message, /whole number of seconds from 60 to 86400/);
      }
      const short = await team.cli(lead, ['acquire', '--ttl', '59'], { json: false });
      assert.equal(short.code, 2);
      assert.match(short.stderr, /^lockstep: The ttl must be a whole number of seconds from 60 to 86400, e\.g\. 60;/m);
      const human = await team.cli(lead, ['acquire', '--ttl', '1.5'], { json: false });
      assert.equal(human.code, 2);
      assert.match(human.stderr, /^lockstep: The ttl must be a whole number of seconds/m);
      assert.equal((await status(lead)).state, 'free', 'no bad TTL acquired anything');
    });

    it('acquire --ttl: the bounds themselves, 60 s and 86,400 s, are granted and kept by the grant', async () => {
      for (const ttl of [60, 86_400]) {
        const got = expectOk(await team.cli(lead, ['acquire', '--ttl', String(ttl)]), `--ttl ${ttl}`);
        const held = await status(lead);
        assert.equal(held.state, 'held-by-me');
        assert.equal(held.holder.expiresAt, got.expiresAt);
        assert.ok(Math.abs(got.expiresAt - Date.now() - ttl * 1000) < 30_000, `--ttl ${ttl}: expires about ${ttl} s from now`);
        expectOk(await team.cli(lead, ['release']), 'release');
      }
      const human = await team.cli(lead, ['acquire', '--ttl', '60'], { json: false });
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^Acquired — grant #\d+, (1m 00s|5\ds) until expiry\./m);
      expectOk(await team.cli(lead, ['release']), 'release');
      const help = await team.cli(lead, ['acquire', '--help'], { json: false });
      assert.match(help.stdout, /--ttl S {4}lease length in whole seconds, 60–86400, the container's bounds/);
    });

    it('heartbeat --every: below 1 s or past a day is a usage error (exit 2) naming every, also while holding', async () => {
      expectOk(await team.cli(lead, ['acquire']), 'acquire');
      // Without the check these would start a heartbeat loop that never ends: the deadline fails the test then.
      for (const every of ['0', '0.5', '86401']) {
        const error = expectError(await team.cli(lead, ['heartbeat', '--every', every], { timeoutMs: 30_000 }), 2, 'configuration');
        assert.equal(error.setting, 'every', `--every ${every}`);
      }
      assert.equal((await status(lead)).state, 'held-by-me');
    });

    it('.lockstep.json: leaseTtlSeconds outside 60 s to 24 h makes every command a usage error (exit 2) naming it', async () => {
      const file = path.join(ben.dir, '.lockstep.json');
      const committed = fs.readFileSync(file, 'utf8');
      try {
        for (const leaseTtlSeconds of [59, 0, 86_401, '7200']) {
          fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(committed), leaseTtlSeconds }, null, 2));
          for (const args of [['status'], ['acquire']]) {
            const error = expectError(await team.cli(ben, args), 2, 'configuration');
            assert.equal(error.setting, 'leaseTtlSeconds', `${args[0]} with leaseTtlSeconds ${JSON.stringify(leaseTtlSeconds)}`);
          }
        }
      } finally {
        fs.writeFileSync(file, committed);
      }
      assert.equal((await status(ben)).state, 'held-by-other', 'the committed file works again');
    });
  });

  describe('lease-ids --json', () => {
    it('one run: spans, contiguous, start and end; across a gap: spans and contiguous false, never a start/end that spans the gap', async () => {
      if ((await status(lead)).state !== 'held-by-me') expectOk(await team.cli(lead, ['acquire']), 'acquire');
      // ana gets 1-3, ben 4-6 (both new to the page); ben mints 4 and 5.
      const first = expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '3', '--new-identity']), 'lease-ids');
      assert.deepEqual(first, { ok: true, to: ana.identity, count: 3, spans: [{ start: 1, end: 3 }], contiguous: true, start: 1, end: 3 });
      expectOk(await team.cli(lead, ['lease-ids', '--to', ben.identity, '--count', '3', '--new-identity']), 'lease-ids');
      for (const id of [4, 5]) assert.equal(expectOk(await team.cli(ben, ['next-id']), 'next-id').id, id);
      // The release returns 1-3 and 6 to the pool; 4 and 5 were minted and are never issued again.
      expectOk(await team.cli(lead, ['release']), 'release');
      assert.deepEqual((await status(lead)).pool, [
        { start: 1, end: 3 },
        { start: 6, end: 6 },
      ]);
      expectOk(await team.cli(lead, ['acquire']), 'acquire again');

      // Five: the pool's 1-3 and 6, then 7 (new): 6 and 7 join; 4-5 is a gap.
      const gap = expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '5']), 'lease-ids across a gap');
      assert.deepEqual(gap, {
        ok: true,
        to: ana.identity,
        count: 5,
        spans: [
          { start: 1, end: 3 },
          { start: 6, end: 7 },
        ],
        contiguous: false,
      });
      assert.equal('start' in gap || 'end' in gap, false, 'no start/end that would take in 4 and 5');
      const human = await team.cli(lead, ['lease-ids', '--to', ben.identity, '--count', '1'], { json: false });
      assert.match(human.stdout, /^Leased identifiers 8 to ben@example\.com\.$/m);
      const help = await team.cli(lead, ['lease-ids', '--help'], { json: false });
      assert.match(help.stdout, /start and end\s+are given only when contiguous is true/);
    });
  });

  describe('a reader that goes away', () => {
    /**
     * `lockstep status | head -1`: the built CLI with stdout a pipe whose read end this test destroys after the
     * first line. Whether a later write finds it closed (EPIPE) is a race, run twenty times to meet it.
     */
    function statusReadOnce(
      who: TeamMember,
    ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; first: string }> {
      return new Promise((resolve, reject) => {
        const child = team.spawnCli(who, ['status']);
        let first = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          if (first.includes('\n')) return;
          first += chunk;
          if (first.includes('\n')) child.stdout.destroy(); // like head -1: the first line, then the read end closes
        });
        child.stdout.on('error', () => undefined);
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
        });
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`status did not end within 30 s; stderr ${stderr}`));
        }, 30_000);
        child.on('error', error => {
          clearTimeout(timer);
          reject(error);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stderr, first: first.split('\n')[0] });
        });
      });
    }

    it('status | head -1, twenty times: every run ends with exit 0 and nothing on stderr (no EPIPE stack trace)', async () => {
      for (let i = 0; i < 20; i++) {
        const run = await statusReadOnce(ana);
        assert.match(run.first, /^Held by lead@example\.com — grant #\d+/, `run ${i + 1}: the first line`);
        assert.equal(run.stderr, '', `run ${i + 1}: stderr`);
        assert.deepEqual([run.code, run.signal], [0, null], `run ${i + 1}: exit`);
      }
    });
  });

  describe('text an older client stored', () => {
    /** C1 controls (U+009B is a terminal's CSI) and bidirectional controls (U+202E reverses what follows). */
    const RAW = /[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

    it('queue, status, blocks and audit print no raw C1 or bidi control, for people or in --json, and --json keeps the values', async () => {
      // Written through the store itself, as a client from before issue #24 could: its notes kept C1 and bidi controls.
      const probe = await Container.open({ cwd: ana.dir, env: { ...process.env, LOCKSTEP_PATH: team.store } });
      const driver = await openDriver(probe.config);
      const note = 'urgent \u202eoot \u009b2J\u009b31m fix';
      const who = 'mallory\u202e@example.com';
      try {
        const stored = await driver.read(probe.key);
        const record = stored!.value as LockRecord;
        const next: LockRecord = {
          ...record,
          queue: [...record.queue, { identity: who, at: Date.now(), note }],
          lastBlock: record.lastBlock + 1,
          blocks: [
            ...record.blocks,
            { id: record.lastBlock + 1, to: who, text: `tables \u009b1;1H\u2067`, grant: record.grant, at: Date.now() },
          ],
          audit: [...record.audit, { at: Date.now(), who, action: 'petition', grant: record.grant, outcome: 'done', detail: note }],
        };
        assert.equal((await driver.compareAndSwap(probe.key, stored!.revision, next, { summary: 'petition by an older client' })).ok, true);
      } finally {
        await driver.close();
        await probe.close();
      }
      for (const args of [['queue'], ['status'], ['blocks'], ['audit']]) {
        const human = await team.cli(ana, args, { json: false });
        assert.equal(human.code, 0, `${args[0]}: ${human.stderr}`);
        assert.doesNotMatch(human.stdout + human.stderr, RAW, `${args[0]} printed a raw control`);
        const json = await team.cli(ana, args);
        assert.equal(json.code, 0, `${args[0]} --json: ${json.stderr}`);
        assert.doesNotMatch(json.stdout, RAW, `${args[0]} --json printed a raw control`);
      }
      const queue = await team.cli(ana, ['queue'], { json: false });
      assert.match(queue.stdout, /mallory\\u202e@example\.com — since .* — urgent \\u202eoot \\u009b2J\\u009b31m fix$/m, 'shown, escaped');
      assert.ok(
        expectOk(await team.cli(ana, ['queue']), 'queue').queue.some((p: { note?: string }) => p.note === note),
        '--json: the same value',
      );
    });
  });
});
