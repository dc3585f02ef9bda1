import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container, TEST_COMPACT_AFTER_ENV } from '../../src/core/container/container';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { AUDIT_LOG_KEEP, auditLogText } from '../../src/core/stores/git/auditHistory';

/** AUDIT_LOG_KEEP as the guard's messages write it (2,000). */
const KEPT = AUDIT_LOG_KEEP.toLocaleString('en');
import { compactionSubject, stampEnv, stampOf } from '../../src/core/stores/git/recordCommit';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { SIGNING_TEAM, signWithSshKeys } from '../helpers/teamSigning';

/**
 * The git driver's lock ref compacts itself (issue 30): a write that leaves BOUND commits on the last
 * snapshot squashes the history as `lockstep compact` does, the server guard checks that snapshot as
 * any other, and nothing about it may change a command's outcome — a refusal (an older guard) is told
 * once and backed off, a compaction cut short is finished by the next write. The bound is the tests'
 * (LOCKSTEP_TEST_COMPACT_AFTER), not the real 100 (AUTO_COMPACT_AFTER). Real CLI processes, a bare remote with the server
 * guard, reached by its path and through `git daemon`.
 */

const BOUND = 4;
const BOUND_ENV = { [TEST_COMPACT_AFTER_ENV]: String(BOUND) };

for (const transport of process.env.ONLY_TRANSPORT ? [process.env.ONLY_TRANSPORT as 'path'] : (['path', 'daemon'] as const)) {
  describe(`git driver: the lock ref compacts itself (remote by ${transport})`, function () {
    this.timeout(240_000);
    let team: FencingTeam;
    let lead: TeamMember, ana: TeamMember;
    let recordRef: string;
    let hook: string;

    const ok = (result: CliResult, what: string): any => {
      assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      return result.json;
    };
    const run = (who: TeamMember, args: string[], env: Record<string, string> = {}) =>
      team.lockstep(who.dir, args, { env: { ...BOUND_ENV, ...env } });
    /** Commits on the remote's lock ref (1: one snapshot, or the page's creation). */
    const refLength = async () => Number(await team.gitOk(team.remote, 'rev-list', '--count', recordRef));
    const isSnapshot = async () => (await team.git(team.remote, ['cat-file', '-e', `${recordRef}:audit.log`])).code === 0;
    /** One write of ana's: a petition, or its withdrawal when she is queued. */
    let queued = false;
    async function write(env: Record<string, string> = {}): Promise<CliResult> {
      const result = await run(ana, [queued ? 'withdraw' : 'petition'], env);
      if (result.code === 0) queued = !queued;
      return result;
    }
    /** ana's writes until the lock ref is `length` commits long (the page's own history, not yet compacted). */
    async function writeUntil(length: number): Promise<void> {
      while ((await refLength()) < length) ok(await write(), 'a write below the bound');
    }
    /** Puts `script` (sh, reading the hook's stdin as $input) before the server guard; the guard runs when it exits 0. */
    function wrapGuard(script: string): void {
      // A new file renamed over the hook: a hook still running keeps reading the one it started with.
      fs.writeFileSync(`${hook}.new`, `#!/bin/sh\ninput=$(cat)\n${script}\nprintf '%s\\n' "$input" | "${hook}.guard" "$@"\n`, {
        mode: 0o755,
      });
      fs.renameSync(`${hook}.new`, hook);
    }
    /** sh: true when the push replaces the lock ref by a parentless commit (a compaction). */
    const snapshotTest = `printf '%s\\n' "$input" | while read old new ref; do [ "$old" != 0000000000000000000000000000000000000000 ] && [ -z "$(git rev-list --parents -n 1 "$new" | cut -s -d' ' -f2-)" ] && echo yes; done`;

    /** The remote's lock ref as ana's clone fetches it: its tip and record text. */
    async function tipOf(who: TeamMember): Promise<{ tip: string; recordText: string }> {
      await team.gitOk(who.dir, 'fetch', '--quiet', 'origin', `+${recordRef}:refs/forge/tip`);
      const tip = await team.gitOk(who.dir, 'rev-parse', 'refs/forge/tip');
      return { tip, recordText: await team.gitOk(who.dir, 'cat-file', 'blob', `${tip}:record.json`) };
    }
    /** The page's audit entries through its history, newest first (what a compaction keeps, up to AUDIT_LOG_KEEP). */
    async function historyOf(who: TeamMember) {
      const container = await Container.open({ cwd: who.dir, env: team.env });
      try {
        return (await container.history(Infinity)) ?? [];
      } finally {
        await container.close();
      }
    }
    /** A snapshot made as a client makes it (record unchanged, stamped and titled from its last audit line), with `log` as its audit.log. */
    async function snapshotOf(dir: string, recordText: string, log: string): Promise<string> {
      const blob = async (text: string) => (await team.git(dir, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
      const tree = (
        await team.git(dir, ['mktree'], {
          input: `100644 blob ${await blob(log)}\taudit.log\n100644 blob ${await blob(recordText)}\trecord.json\n`,
        })
      ).stdout.trim();
      const count = log.split('\n').filter(l => l !== '').length;
      const made = await team.git(dir, ['commit-tree', '--no-gpg-sign', tree], {
        input: `${compactionSubject(count)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\nLockstep-Snapshot: ${count}\n`,
        env: stampEnv(stampOf(JSON.parse(recordText).audit.at(-1))),
      });
      assert.equal(made.code, 0, made.stderr);
      return made.stdout.trim();
    }
    /** ana pushes a commit to the lock ref past her client hook: only the server guard stands in the way. */
    const forcePush = (commit: string) => team.git(ana.dir, ['push', '--no-verify', '--force', 'origin', `${commit}:${recordRef}`]);

    beforeEach(async () => {
      team = await createFencingTeam({ members: ['lead', 'ana'], operators: ['lead@example.com'], driver: 'git', transport });
      [lead, ana] = team.members;
      queued = false;
      recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
      const hooks = (await team.gitOk(team.remote, 'rev-parse', '--git-path', 'hooks')).trim();
      hook = path.join(path.isAbsolute(hooks) ? hooks : path.join(team.remote, hooks), 'pre-receive');
      fs.renameSync(hook, `${hook}.guard`);
      wrapGuard('');
    });
    afterEach(() => team?.dispose());

    it('a write that reaches the bound compacts the ref into a snapshot the guard accepted; audit --history reads the same entries through it', async () => {
      ok(await run(lead, ['acquire']), 'lead acquires');
      await writeUntil(BOUND);
      assert.equal(await isSnapshot(), false, 'below the bound nothing is compacted');
      const before = ok(await run(lead, ['audit', '--history']), 'the history before').history;
      ok(await write(), 'the write that reaches the bound');
      assert.equal(await refLength(), 1, 'the lock ref is one commit again');
      assert.equal(await isSnapshot(), true, 'a snapshot holding audit.log');
      const after = ok(await run(lead, ['audit', '--history']), 'the history after').history;
      assert.equal(after.length, before.length + 1, 'every entry, and the write that compacted');
      assert.deepEqual(after.slice(0, before.length), before, 'the entries before are read unchanged through the snapshot');
      // The page reads and moves on as before, in every clone; the next compaction keeps the first one's entries.
      ok(await run(lead, ['heartbeat']), 'the holder heartbeats on the snapshot');
      await writeUntil(BOUND);
      ok(await write(), 'the write that reaches the bound again');
      assert.equal(await refLength(), 1, 'compacted again');
      const again = ok(await run(ana, ['audit', '--history']), 'the history after two compactions').history;
      assert.deepEqual(again.slice(0, after.length), after);
      // Without the tests' bound (the real 1,000) the same writes compact nothing.
      ok(await team.lockstep(ana.dir, [queued ? 'withdraw' : 'petition']), 'a write far below the real bound');
      queued = !queued;
      assert.equal(await refLength(), 2);
    });

    it("a window's timeline is the history of the record it read: writes since, and a compaction, change it only at the window's next read", async () => {
      ok(await run(lead, ['acquire']), 'lead acquires');
      const window = await Container.open({ cwd: ana.dir, env: team.env });
      try {
        const shown = await window.read();
        const timeline = (await window.history(Infinity, shown.revision)) ?? assert.fail('the git driver keeps a history');
        assert.equal(timeline[0].revision, shown.revision, 'its newest entry is the record shown');
        // Writes of other processes up to the bound: the last one compacts the ref into a snapshot.
        let writes = 0;
        while (!(await isSnapshot())) {
          ok(await write(), 'a write');
          writes += 1;
          assert.ok(writes <= BOUND, 'a write at the bound compacts');
        }
        assert.deepEqual(await window.history(Infinity, shown.revision), timeline, 'read again at the record shown: the same');
        const next = await window.read();
        const now = (await window.history(Infinity, next.revision)) ?? assert.fail('a history');
        assert.equal(now.length, timeline.length + writes, 'every write since, read through the snapshot');
        assert.deepEqual(
          now.slice(writes).map(e => e.summary),
          timeline.map(e => e.summary),
          'what was listed before is listed after, unchanged',
        );
      } finally {
        await window.close();
      }
    });

    it('the guard accepts only a snapshot that keeps every newest entry: one dropped or altered is refused', async () => {
      ok(await run(lead, ['acquire']), 'lead acquires');
      ok(await write(), 'a petition');
      ok(await write(), 'a withdrawal');
      const { tip, recordText } = await tipOf(ana);
      const entries = await historyOf(ana);
      assert.ok(entries.length >= 4);
      const snapshot = (log: string) => snapshotOf(ana.dir, recordText, log);
      const refusedFor = async (log: string, what: string) => {
        const pushed = await forcePush(await snapshot(log));
        assert.notEqual(pushed.code, 0, `${what}: refused\n${pushed.stderr}`);
        assert.match(pushed.stderr, new RegExp(`newest ${KEPT} entries of the record's audit history`), what);
        assert.equal(await team.gitOk(team.remote, 'rev-parse', recordRef), tip, `${what}: the lock ref did not move`);
      };
      await refusedFor(auditLogText(entries.slice(0, -1)), 'the oldest entry dropped');
      await refusedFor(auditLogText([entries[0], ...entries.slice(2)]), 'an entry in the middle dropped');
      await refusedFor(auditLogText(entries.map((e, i) => (i === 1 ? { ...e, summary: `${e.summary} (edited)` } : e))), 'an entry altered');
      await refusedFor(auditLogText([entries[1], entries[0], ...entries.slice(2)]), 'two entries swapped');
      // Control: the same snapshot with the entries as they are.
      const kept = await forcePush(await snapshot(auditLogText(entries)));
      assert.equal(kept.code, 0, `the faithful snapshot is accepted\n${kept.stderr}`);
      assert.equal(await refLength(), 1);
    });

    it(`a compaction keeps the newest ${KEPT} entries: the guard refuses one that keeps more (an earlier build's 10,000 too), and the automatic one trims an earlier build's snapshot`, async () => {
      ok(await run(lead, ['acquire']), 'lead acquires');
      // A page compacted long ago by an earlier build, which kept 10,000 entries (written into the remote by its administrator).
      const OLD = 10_000;
      assert.ok(OLD > AUDIT_LOG_KEEP);
      const { recordText } = await tipOf(ana);
      const old = Array.from({ length: OLD }, (_, i) => ({
        revision: i.toString(16).padStart(40, '0'),
        time: Date.UTC(2025, 0, 1) + i * 1000,
        author: 'old@example.com',
        summary: `old write ${i}`,
      })).reverse();
      await team.gitOk(team.remote, 'update-ref', recordRef, await snapshotOf(team.remote, recordText, auditLogText(old)));
      await writeUntil(BOUND);
      const everything = await historyOf(ana);
      assert.equal(everything.length, OLD + BOUND - 1, 'the history reads through the snapshot');
      const { tip, recordText: now } = await tipOf(ana);
      // Keeping every entry, or the newest 10,000 as an earlier build's compaction did, is not a compaction the guard accepts.
      for (const [count, what] of [
        [everything.length, 'every entry'],
        [OLD, "the newest 10,000 (an earlier build's compaction)"],
      ] as const) {
        const kept = await forcePush(await snapshotOf(ana.dir, now, auditLogText(everything.slice(0, count))));
        assert.notEqual(kept.code, 0, `a snapshot of ${what} is refused\n${kept.stderr}`);
        assert.match(kept.stderr, new RegExp(`newest ${KEPT} entries`), what);
        assert.equal(await team.gitOk(team.remote, 'rev-parse', recordRef), tip, `${what}: the lock ref did not move`);
      }
      // The write that reaches the bound compacts: the oldest entries go, the guard accepts it.
      const reaching = ok(await write(), 'the write that reaches the bound') && (await refLength());
      assert.equal(reaching, 1, 'compacted');
      const log = (await team.gitOk(team.remote, 'cat-file', 'blob', `${recordRef}:audit.log`)).split('\n');
      assert.equal(log.length, AUDIT_LOG_KEEP, `its audit.log holds ${KEPT} entries`);
      assert.equal(JSON.parse(log[0]).summary, `old write ${OLD - AUDIT_LOG_KEEP + BOUND}`, 'the oldest ones left out');
      assert.deepEqual(
        log.slice(-BOUND).map(l => JSON.parse(l).revision),
        (await historyOf(ana))
          .slice(0, BOUND)
          .map(e => e.revision)
          .reverse(),
        'the newest ones kept, in order',
      );
    });

    it('a compaction the remote refuses leaves the command as it was, is told once on stderr and not tried at the next write', async () => {
      const attempts = path.join(team.root, 'compaction-attempts');
      // An older server guard: it refuses any snapshot (this one says so and counts the attempts).
      wrapGuard(`if [ -n "$(${snapshotTest})" ]; then echo attempt >> "${attempts}"; echo "an older guard: no compaction" >&2; exit 1; fi`);
      ok(await run(lead, ['acquire']), 'lead acquires');
      await writeUntil(BOUND);
      const reaching = await write();
      const petitioned = ok(reaching, 'the write that reaches the bound succeeds');
      assert.equal(fs.readFileSync(attempts, 'utf8'), 'attempt\n', 'one compaction was tried');
      assert.match(
        reaching.stderr,
        /warning: The lock page's history was not compacted: .*pre-receive hook declined.*tries again after 100 more writes/s,
      );
      assert.doesNotMatch(reaching.stderr, /refs\/lockstep\/[0-9a-f]|ana@example|lead@example/, 'no names in the warning');
      assert.equal(await refLength(), BOUND + 1, 'the page keeps its history');
      const status = ok(await run(lead, ['status']), 'the page reads');
      assert.equal(status.queue.length, queued ? 1 : 0, `the write's own outcome stands (${JSON.stringify(petitioned)})`);
      const next = await write();
      ok(next, 'the next write succeeds');
      assert.equal(fs.readFileSync(attempts, 'utf8'), 'attempt\n', 'and tries no compaction');
      assert.doesNotMatch(next.stderr, /not compacted/, 'nor tells it again');
      team.assertNoSecretLeaked();
    });

    it('a compaction cut short (its push killed while the guard hangs) changes nothing; the next write compacts', async () => {
      const go = path.join(team.root, 'go');
      // The guard hangs on a snapshot until the test lets it go, then refuses it: the push never lands.
      wrapGuard(`if [ -n "$(${snapshotTest})" ]; then while [ ! -e "${go}" ]; do sleep 0.1; done; exit 1; fi`);
      ok(await run(lead, ['acquire']), 'lead acquires');
      await writeUntil(BOUND);
      const reaching = await write({ LOCKSTEP_GIT_TIMEOUT_SECONDS: '4' });
      ok(reaching, 'the write that reaches the bound succeeds; its compaction times out');
      assert.doesNotMatch(reaching.stderr, /not compacted/, 'an unknown outcome is no refusal');
      fs.writeFileSync(go, '');
      wrapGuard('');
      assert.equal(await refLength(), BOUND + 1, 'the page is as it was');
      ok(await write(), 'the next write');
      assert.equal(await refLength(), 1, 'the next write compacted it');
      assert.equal(await isSnapshot(), true);
    });
  });
}

describe('git driver: a signed lock page compacts itself, signed by its writer', function () {
  this.timeout(240_000);
  let team: FencingTeam;
  let keys: Record<string, string>;
  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const run = (who: TeamMember, args: string[]) => team.lockstep(who.dir, args, { env: BOUND_ENV });
  before(async () => {
    team = await createFencingTeam({ ...SIGNING_TEAM, driver: 'git' });
    const [alice, bob, ops] = team.members;
    keys = await signWithSshKeys(team, [alice, bob, ops], ops, [alice, bob]);
    ok(
      await run(ops, ['adopt', '--reason', 'signing turned on', '--grant', '0', '--next-id', '1000']),
      'ops adopts: the signed chain starts',
    );
    ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'the server guard (it pins allowedSigners)');
  });
  after(() => team?.dispose());

  it('the writer that reaches the bound signs the snapshot; the guard accepts it and every clone, a fresh one too, proves it', async () => {
    const [alice, bob, ops] = team.members;
    const recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    const refLength = async () => Number(await team.gitOk(team.remote, 'rev-list', '--count', recordRef));
    ok(await run(alice, ['acquire']), 'alice acquires');
    let queued = false;
    while ((await refLength()) < BOUND) {
      ok(await run(bob, [queued ? 'withdraw' : 'petition']), 'bob writes');
      queued = !queued;
    }
    for (const who of [alice, bob, ops]) ok(await run(who, ['status']), `${who.name} proves the page (a checkpoint)`);
    const reaching = await run(bob, [queued ? 'withdraw' : 'petition']);
    ok(reaching, 'the write that reaches the bound');
    assert.doesNotMatch(reaching.stderr, /not compacted/);
    assert.equal(await refLength(), 1, 'compacted by itself');
    const signer = await team.gitOk(team.remote, 'log', '-1', '--format=%an', recordRef);
    assert.equal(signer, bob.identity, 'stamped as its last actor, who signed it');
    for (const who of [alice, bob, ops]) ok(await run(who, ['status']), `${who.name} proves the snapshot over its checkpoint`);
    const fresh: TeamMember = { name: 'dan', identity: 'dan@example.com', dir: path.join(team.root, 'dan') };
    await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, fresh.dir);
    await team.gitOk(fresh.dir, 'config', 'user.email', fresh.identity);
    assert.equal(ok(await run(fresh, ['status']), 'a fresh clone proves it').holder.identity, alice.identity);
    ok(await run(alice, ['release']), 'alice releases on top of it, signed');
  });

  it(`a clone whose last verified step fell out of a full snapshot's ${KEPT} entries accepts it only when every kept entry is newer`, async () => {
    const [alice, , ops] = team.members;
    const recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    const status = (who: TeamMember) => team.lockstep(who.dir, ['status']);
    assert.equal((await status(alice)).code, 0, 'alice proves the page: her checkpoint is its tip');
    const tip = await team.gitOk(team.remote, 'rev-parse', recordRef);
    const recordText = await team.gitOk(team.remote, 'cat-file', 'blob', `${tip}:record.json`);
    const line = JSON.parse(recordText).audit.at(-1);
    /** A snapshot of the record as it is, signed by the operator, whose audit.log holds `count` entries from `from` (ms) on. */
    async function snapshot(count: number, from: number): Promise<string> {
      const entries = Array.from({ length: count }, (_, i) => ({
        revision: (i + 1).toString(16).padStart(40, '0'),
        time: from + i,
        author: ops.identity,
        summary: `a write ${i}`,
      })).reverse();
      const log = auditLogText(entries);
      const blob = async (text: string) => (await team.git(team.remote, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
      const tree = (
        await team.git(team.remote, ['mktree'], {
          input: `100644 blob ${await blob(log)}\taudit.log\n100644 blob ${await blob(recordText)}\trecord.json\n`,
        })
      ).stdout.trim();
      const made = await team.git(team.remote, ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${keys.ops}`, 'commit-tree', '-S', tree], {
        input: `${compactionSubject(count)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\nLockstep-Snapshot: ${count}\n`,
        env: stampEnv(stampOf(line)),
      });
      assert.equal(made.code, 0, made.stderr);
      return made.stdout.trim();
    }
    const readsAfter = async (commit: string) => {
      await team.gitOk(team.remote, 'update-ref', recordRef, commit);
      return status(alice);
    };
    const tampered = (result: CliResult, what: string) => {
      assert.equal(result.code, 5, `${what}: the page reads tampered\n${result.stdout}${result.stderr}`);
      assert.match(result.stdout, /does not hold the step this clone verified last/, what);
    };
    tampered(await readsAfter(await snapshot(AUDIT_LOG_KEEP - 1, line.at + 1)), 'a snapshot that is not full and lacks the verified step');
    tampered(
      await readsAfter(await snapshot(AUDIT_LOG_KEEP, line.at - 20_000)),
      'a full snapshot with entries older than the verified step (a rewind)',
    );
    // Alice was away while the team compacted: her git pruned the commit she verified last (unreachable
    // once compacted), and her checkpoint still judges the snapshot by that step's time and record.
    await team.gitOk(alice.dir, 'reflog', 'expire', '--expire-unreachable=now', '--all');
    await team.gitOk(alice.dir, 'gc', '--quiet', '--prune=now');
    assert.notEqual((await team.git(alice.dir, ['cat-file', '-e', tip])).code, 0, "the verified step's commit is gone from alice's clone");
    tampered(
      await readsAfter(await snapshot(AUDIT_LOG_KEEP, line.at - 20_000)),
      'a full snapshot with entries older than the verified step, its commit pruned (a rewind)',
    );
    const full = await readsAfter(await snapshot(AUDIT_LOG_KEEP, line.at + 1));
    assert.equal(
      full.code,
      0,
      `a full snapshot whose entries are all newer reads fine, the verified commit pruned\n${full.stdout}${full.stderr}`,
    );
  });
});
