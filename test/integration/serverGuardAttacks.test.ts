import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SECOND } from '../../src/core/clock';
import * as protocol from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { stampEnv, stampOf, transitionSubject } from '../../src/core/stores/git/recordCommit';
import { hashProof, hashToken } from '../../src/core/tokens';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';

/**
 * The server guard played by an adversary: a teammate who can push to the shared remote, with the
 * git driver (the lock record lives in the remote itself). One test per attack of the review that
 * broke the earlier guard, over two transports: a bare remote reached by its path (the hook
 * inherits the pusher's environment) and the same remote behind `git daemon` (the hook runs in the
 * daemon's environment). Each asserts that main and the lock ref did not move; each has a control:
 * the legitimate holder's push and transitions still go through.
 */

for (const transport of process.env.ONLY_TRANSPORT ? [process.env.ONLY_TRANSPORT as 'path'] : (['path', 'daemon'] as const)) {
  describe(`server guard under attack (git driver, remote by ${transport})`, function () {
    this.timeout(240_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember, ops: TeamMember;
    let recordRef: string;

    const ok = (result: CliResult, what: string): any => {
      assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      return result.json;
    };
    const remoteRef = (ref: string) => team.gitOk(team.remote, 'rev-parse', '--verify', '--quiet', ref).catch(() => '');
    /** Fetches the record ref into the clone and returns its tip and record (null when absent). */
    async function fetchRecord(who: TeamMember): Promise<{ tip: string | null; record: any }> {
      const fetched = await team.git(who.dir, ['fetch', '--quiet', 'origin', `+${recordRef}:refs/forge/tip`]);
      if (fetched.code !== 0) return { tip: null, record: null };
      const tip = await team.gitOk(who.dir, 'rev-parse', 'refs/forge/tip');
      return { tip, record: JSON.parse(await team.gitOk(who.dir, 'cat-file', 'blob', `${tip}:record.json`)) };
    }
    /** A commit made with plumbing, as an attacker would: any files, any parents, any message. */
    async function forge(who: TeamMember, files: Record<string, string>, parents: readonly string[], message = 'forged'): Promise<string> {
      const entries: string[] = [];
      for (const [name, text] of Object.entries(files)) {
        const blob = (await team.git(who.dir, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
        entries.push(`100644 blob ${blob}\t${name}\n`);
      }
      const tree = (await team.git(who.dir, ['mktree'], { input: entries.join('') })).stdout.trim();
      const commit = await team.git(who.dir, ['commit-tree', tree, ...parents.flatMap(p => ['-p', p])], { input: `${message}\n` });
      assert.equal(commit.code, 0, commit.stderr);
      return commit.stdout.trim();
    }
    /**
     * A record commit exactly as a lockstep client writes it (its subject, author and date derived from
     * the record's new audit line), with any record bytes and parents: what passes every rule of the
     * guard but the one under test.
     */
    async function forgeLike(
      who: TeamMember,
      recordText: string,
      parents: readonly string[],
      overrides: { env?: Record<string, string>; subject?: string } = {},
    ): Promise<string> {
      const record = JSON.parse(recordText);
      const line = record.audit[record.audit.length - 1];
      const blob = (await team.git(who.dir, ['hash-object', '-w', '--stdin'], { input: recordText })).stdout.trim();
      const tree = (await team.git(who.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
      const message = `${overrides.subject ?? transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`;
      const commit = await team.git(who.dir, ['commit-tree', '--no-gpg-sign', tree, ...parents.flatMap(p => ['-p', p])], {
        input: message,
        env: { ...stampEnv(stampOf(line)), ...overrides.env },
      });
      assert.equal(commit.code, 0, commit.stderr);
      return commit.stdout.trim();
    }
    const container = () => ({ leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] });
    /** Pushes past the client hook, with force: only the server stands in the way. */
    const pushRaw = (who: TeamMember, refspec: string, extra: readonly string[] = [], env?: Record<string, string>) =>
      team.git(who.dir, ['push', '--no-verify', '--force', ...extra, 'origin', refspec], env ? { env } : {});
    function refusedByServer(result: CliResult, pattern: RegExp, what: string): void {
      assert.notEqual(result.code, 0, `${what}: the push must be refused\n${result.stderr}`);
      assert.match(result.stderr, /pre-receive hook declined/, `${what}: refused by the server\n${result.stderr}`);
      assert.match(result.stderr, pattern, `${what}\n${result.stderr}`);
    }
    /** Runs an attack and checks that neither main nor the lock ref moved. */
    async function unmoved(attack: () => Promise<void>): Promise<void> {
      const [main, lock, release] = [await remoteRef('refs/heads/main'), await remoteRef(recordRef), await remoteRef('refs/heads/release')];
      await attack();
      assert.equal(await remoteRef('refs/heads/main'), main, 'main did not move');
      assert.equal(await remoteRef(recordRef), lock, 'the lock ref did not move');
      assert.equal(await remoteRef('refs/heads/release'), release, 'the release branch did not appear');
    }
    async function holderLands(who: TeamMember, file: string): Promise<string> {
      await team.gitOk(who.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const sha = await team.commit(who, file);
      ok(await team.git(who.dir, ['push', 'origin', 'HEAD:refs/heads/main']), `${who.name} lands ${file}`);
      assert.equal(await remoteRef('refs/heads/main'), sha);
      return sha;
    }

    before(async () => {
      team = await createFencingTeam({
        members: ['alice', 'bob', 'ops'],
        operators: ['ops@example.com'],
        driver: 'git',
        transport,
        initArgs: ['--protect', 'main', '--protect', 'release'],
      });
      [alice, bob, ops] = team.members;
      recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    });
    after(() => team?.dispose());

    it('1a. the page cannot be replaced, nor another page created beside it', async () => {
      assert.notEqual(await remoteRef(recordRef), '', 'lockstep init created the page');
      await unmoved(async () => {
        const record = {
          v: 1,
          container: team.container,
          grant: 7,
          holder: {
            identity: bob.identity,
            grant: 7,
            tokenHash: hashToken('b'.repeat(64)),
            proofHash: hashProof('c'.repeat(64)),
            grantedAt: Date.now(),
            expiresAt: Date.now() + 3_600_000,
          },
          releasedAt: null,
          queue: [],
          ranges: [],
          nextId: 1,
          blocks: [],
          audit: [{ at: Date.now(), who: bob.identity, action: 'acquire', grant: 7, outcome: 'done' }],
        };
        const commit = await forge(bob, { 'record.json': JSON.stringify(record) }, []);
        // `lockstep init` created the page before the guard was installed, so this replaces it.
        refusedByServer(
          await pushRaw(bob, `${commit}:${recordRef}`),
          /refused the lock record's update: the update rewinds, replaces or skips/,
          'bob replaces the page with one at grant 7',
        );
        const elsewhere = `refs/lockstep/${namespaceDigest('mine')}/records/${'e'.repeat(64)}`;
        refusedByServer(
          await pushRaw(bob, `${commit}:${elsewhere}`),
          /keeps only its own container's lock refs/,
          'bob creates a page under another namespace',
        );
      });
      // Control: alice acquires (a legal transition of the page) and lands.
      assert.equal(ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires').grant, 1);
      await holderLands(alice, 'a1.txt');
    });

    it('1b. forged records naming the pusher (same grant, grant + 1) are refused, and so is main with a self-minted proof', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(bob);
        assert.equal(record.holder.identity, alice.identity);
        const line = (grant: number) => ({ at: Date.now(), who: bob.identity, action: 'acquire', grant, outcome: 'done' });
        const mine = {
          ...record.holder,
          identity: bob.identity,
          tokenHash: hashToken('d'.repeat(64)),
          proofHash: hashProof('e'.repeat(64)),
        };
        const same = { ...record, holder: mine, audit: [...record.audit, line(1)] };
        refusedByServer(
          await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(same) }, [tip!])}:${recordRef}`),
          /not what acquire by bob/,
          'same grant',
        );
        const next = { ...record, grant: 2, holder: { ...mine, grant: 2 }, audit: [...record.audit, line(2)] };
        refusedByServer(
          await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(next) }, [tip!])}:${recordRef}`),
          /not what acquire by bob/,
          'grant + 1 while alice holds',
        );
        await team.commit(bob, 'b1.txt');
        refusedByServer(
          await pushRaw(bob, 'HEAD:refs/heads/main', ['-o', 'lockstep-grant=2', '-o', `lockstep-proof=${'e'.repeat(64)}`]),
          /refused refs\/heads\/main: Grant #2|not valid for the current grant #1/,
          'bob lands with a proof he minted',
        );
      });
      await holderLands(alice, 'a2.txt');
    });

    it('2. rewinds, unrelated histories and fake compactions of the lock ref are refused; a real compaction is accepted', async () => {
      const before = await fetchRecord(bob);
      ok(
        await team.lockstep(alice.dir, ['lease-ids', '--to', bob.identity, '--count', '5', '--new-identity']),
        'alice leases ids (a holder transition with her proof)',
      );
      ok(await team.lockstep(alice.dir, ['heartbeat']), 'alice heartbeats');
      await unmoved(async () => {
        refusedByServer(await pushRaw(bob, `${before.tip}:${recordRef}`), /rewinds, replaces or skips/, 'rewind to before the lease');
        const unrelated = await forge(bob, { 'record.json': JSON.stringify(before.record) }, []);
        refusedByServer(await pushRaw(bob, `${unrelated}:${recordRef}`), /rewinds, replaces or skips/, 'an unrelated history');
        const now = await fetchRecord(bob);
        const snapshot = await forge(
          bob,
          {
            'record.json': JSON.stringify(now.record),
            'audit.log': '{"revision":"x","time":0,"author":"bob","summary":"nothing happened"}\n',
          },
          [],
          'lockstep: history compacted\n\nLockstep-Snapshot: 1',
        );
        refusedByServer(
          await pushRaw(bob, `${snapshot}:${recordRef}`),
          /a compaction must keep the record unchanged|newest [0-9,]+ entries/,
          'a fake compaction',
        );
      });
      const compacted = ok(await team.lockstep(ops.dir, ['compact']), 'ops compacts');
      assert.ok(compacted.squashed >= 3);
      assert.equal(await team.gitOk(team.remote, 'rev-list', '--count', recordRef), '1', 'the lock ref is one snapshot commit now');
      ok(await team.lockstep(alice.dir, ['heartbeat']), 'alice heartbeats on top of the snapshot');
    });

    it('3. a huge grant or a damaged record cannot make the lock unusable', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(bob);
        const huge = {
          ...record,
          grant: Number.MAX_SAFE_INTEGER,
          holder: { ...record.holder, grant: Number.MAX_SAFE_INTEGER },
          audit: [
            ...record.audit,
            { at: Date.now(), who: bob.identity, action: 'acquire', grant: Number.MAX_SAFE_INTEGER, outcome: 'done' },
          ],
        };
        refusedByServer(
          await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(huge) }, [tip!])}:${recordRef}`),
          /acquire/,
          'grant 2^53 - 1',
        );
        refusedByServer(
          await pushRaw(bob, `${await forge(bob, { 'record.json': '{ "v": 1, "grant": ' }, [tip!])}:${recordRef}`),
          /damaged/,
          'a damaged record',
        );
        refusedByServer(await pushRaw(bob, `:${recordRef}`), /never deleted/, 'deleting the lock ref');
      });
      ok(await team.lockstep(bob.dir, ['petition']), 'bob can still petition: the lock is usable');
    });

    it('4. a .lockstep.json that clients cannot read (a symbolic link, a BOM) unprotects nothing', async () => {
      await unmoved(async () => {
        for (const [what, write] of [
          [
            'a symbolic link',
            () => {
              fs.rmSync(path.join(bob.dir, '.lockstep.json'));
              fs.symlinkSync('README.md', path.join(bob.dir, '.lockstep.json'));
            },
          ],
          [
            'a UTF-8 BOM',
            () => {
              const f = path.join(bob.dir, '.lockstep.json');
              fs.writeFileSync(f, `\ufeff${fs.readFileSync(f, 'utf8')}`);
            },
          ],
        ] as const) {
          await team.gitOk(bob.dir, 'fetch', '--quiet', 'origin');
          await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
          write();
          await team.gitOk(bob.dir, 'commit', '--quiet', '-am', what);
          refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main'), /carries no proof of grant/, `main with ${what}`);
        }
      });
    });

    it('5. a protected branch that does not exist yet, or a push that drops it from .lockstep.json, needs the grant', async () => {
      await unmoved(async () => {
        await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
        refusedByServer(
          await pushRaw(bob, 'HEAD:refs/heads/release'),
          /refused refs\/heads\/release: This push carries no proof/,
          'creating release',
        );
        const file = path.join(bob.dir, '.lockstep.json');
        fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), protectedBranches: [] }, null, 2));
        await team.gitOk(bob.dir, 'commit', '--quiet', '-am', 'nothing is protected');
        refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main'), /carries no proof/, 'main unprotecting itself');
        refusedByServer(await pushRaw(bob, ':refs/heads/main'), /carries no proof/, 'deleting main');
        // An alias whose target does not exist yet: a push to it would create the protected branch.
        await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/rc', 'refs/heads/release');
        refusedByServer(
          await pushRaw(bob, 'origin/main:refs/heads/rc'),
          /refused refs\/heads\/rc: This push carries no proof/,
          'creating release through a dangling alias',
        );
        await team.gitOk(team.remote, 'symbolic-ref', '--delete', 'refs/heads/rc');
      });
      // Control: the holder creates the release branch.
      await team.gitOk(alice.dir, 'fetch', '--quiet', 'origin');
      ok(await team.git(alice.dir, ['push', 'origin', 'origin/main:refs/heads/release']), 'alice creates release');
    });

    it("6. the pusher's LOCKSTEP_* variables cannot point the guard at a record they control", async () => {
      const own = path.join(team.root, 'bob-own.git');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', own);
      await unmoved(async () => {
        await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
        await team.commit(bob, 'b6.txt');
        const envs: Record<string, string>[] = [
          { LOCKSTEP_GIT_REMOTE: own },
          { LOCKSTEP_PREFIX: 'bob' },
          { LOCKSTEP_DRIVER: 'memory' },
          { LOCKSTEP_PATH: path.join(team.root, 'bob-store') },
        ];
        for (const env of envs) {
          refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main', [], env), /carries no proof|not valid/, `with ${Object.keys(env)[0]}`);
        }
      });
    });

    it('7. a symbolic ref on the server that leads to main is main', async () => {
      await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/trunk', 'refs/heads/main');
      await unmoved(async () => {
        refusedByServer(
          await pushRaw(bob, 'HEAD:refs/heads/trunk'),
          /refused refs\/heads\/trunk: This push carries no proof/,
          'bob pushes trunk',
        );
      });
      // Control: the holder's proof goes with every push, so the holder may move main through trunk.
      await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const sha = await team.commit(alice, 'a7.txt');
      ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/trunk']), 'alice through trunk');
      assert.equal(await remoteRef('refs/heads/main'), sha);
    });

    it("8. the holder's proof reaches no other remote, no signed-push certificate, no recursing submodule push", async () => {
      const fork = path.join(team.root, 'fork.git');
      const seen = path.join(team.root, 'fork-options');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', fork);
      await team.gitOk(fork, 'config', 'receive.advertisePushOptions', 'true');
      fs.writeFileSync(
        path.join(fork, 'hooks', 'pre-receive'),
        `#!/bin/sh\ncat >/dev/null\necho "count=\${GIT_PUSH_OPTION_COUNT:-0} $GIT_PUSH_OPTION_0 $GIT_PUSH_OPTION_1" >> '${seen}'\n`,
        { mode: 0o755 },
      );
      await team.gitOk(alice.dir, 'remote', 'add', 'fork', fork);
      await team.gitOk(alice.dir, 'branch', '-f', 'feature', 'HEAD');

      const toFork = await team.git(alice.dir, ['push', 'fork', 'feature']);
      assert.notEqual(toFork.code, 0);
      assert.match(
        toFork.stderr,
        /lockstep: This push goes to fork, not the container's shared remote, and would hand it the proof of your lock\. Push there without it: git -c push\.pushOption= push fork/,
      );
      assert.ok(!fs.existsSync(seen), 'the fork heard nothing');
      ok(await team.git(alice.dir, ['-c', 'push.pushOption=', 'push', 'fork', 'feature']), 'the way the message gives');
      assert.equal(fs.readFileSync(seen, 'utf8').trim(), 'count=0', 'the fork received no push option');

      const signed = await team.git(alice.dir, ['push', '--signed', 'origin', 'HEAD:refs/heads/main']);
      assert.notEqual(signed.code, 0);
      assert.match(signed.stderr, /A signed push stores its push options, and so the proof of your lock, in the remote's push certificate/);
      const recursing = await team.git(alice.dir, ['push', '--recurse-submodules=on-demand', 'origin', 'HEAD:refs/heads/main']);
      assert.notEqual(recursing.code, 0);
      assert.match(recursing.stderr, /hands the push options .* to the submodules' pushes/);
      assert.equal(
        await team.gitOk(alice.dir, 'config', 'push.recurseSubmodules'),
        'check',
        'while the proof is set, no push recurses by configuration',
      );
      const objects = await team.gitOk(fork, 'cat-file', '--batch-all-objects', '--batch-check');
      for (const secret of team.secrets()) {
        assert.ok(!fs.readFileSync(seen, 'utf8').includes(secret));
        for (const line of objects.split('\n')) {
          const sha = line.split(' ')[0];
          if (sha && line.includes(' blob '))
            assert.ok(!(await team.gitOk(fork, 'cat-file', '-p', sha)).includes(secret), 'no object of the fork holds a proof');
        }
      }
      team.assertNoSecretLeaked();
    });

    it("9. without an authenticating server, identities are declared: a clear in an operator's name is the threat model's stated limit", async () => {
      // The control for the HTTP suite, where the server names the pusher and this is refused.
      const status = ok(await team.lockstep(bob.dir, ['status']), 'status');
      assert.equal(status.holder.identity, alice.identity);
      const early = await team.lockstep(bob.dir, ['clear', '--reason', 'mine now'], { env: { LOCKSTEP_IDENTITY: ops.identity } });
      assert.equal(early.code, 1, 'a live holder is never cleared, whoever asks');
      assert.equal(early.json.error.reason, 'not-silent');
    });

    it('10. a commit whose parent line follows its committer line is parentless to git, and so a rewrite of the history', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(ops);
        const next = protocol.petition(record, { identity: ops.identity }, Date.now());
        assert.ok(next.ok);
        const line = next.record.audit[next.record.audit.length - 1];
        const proper = await forgeLike(ops, JSON.stringify(next.record), [tip!]);
        // The same commit with its parent line moved after the committer: git reads no parent at all.
        const text = (await team.gitOk(ops.dir, 'cat-file', 'commit', proper)).split('\n');
        const moved = `${[text[0], ...text.slice(2, 4), text[1], ...text.slice(4)].join('\n')}\n`;
        assert.match(moved, /^tree .*\nauthor .*\ncommitter .*\nparent /);
        const crafted = (
          await team.git(ops.dir, ['hash-object', '-t', 'commit', '--literally', '-w', '--stdin'], { input: moved })
        ).stdout.trim();
        assert.equal(await team.gitOk(ops.dir, 'rev-list', '--count', crafted), '1', 'git sees a parentless commit');
        refusedByServer(
          await pushRaw(ops, `${crafted}:${recordRef}`),
          /rewinds, replaces or skips/,
          `a ${line.action} that erases the history`,
        );
      });
      // Control: the same petition, written by lockstep, lands on top of the history.
      const before = Number(await team.gitOk(team.remote, 'rev-list', '--count', recordRef));
      ok(await team.lockstep(ops.dir, ['petition']), 'ops petitions');
      assert.equal(Number(await team.gitOk(team.remote, 'rev-list', '--count', recordRef)), before + 1, 'one commit on top of the last');
    });

    it('11. a legal transition padded to 1.2 MB (or by a byte) is refused at the push; the lock stays readable and the transition lands unpadded', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(ops);
        const next = protocol.withdraw(record, { identity: ops.identity }, Date.now());
        assert.ok(next.ok);
        const canonical = JSON.stringify(next.record);
        const padded = canonical.replace(/}$/, `${' '.repeat(1_200_000)}}`);
        refusedByServer(
          await pushRaw(ops, `${await forgeLike(ops, padded, [tip!])}:${recordRef}`),
          /larger than 1048576 bytes/,
          'a withdrawal padded to 1.2 MB',
        );
        refusedByServer(
          await pushRaw(ops, `${await forgeLike(ops, `${canonical} `, [tip!])}:${recordRef}`),
          /byte for byte/,
          'a withdrawal padded by one space',
        );
        refusedByServer(
          await pushRaw(ops, `${await forgeLike(ops, JSON.stringify(next.record, null, 1), [tip!])}:${recordRef}`),
          /byte for byte/,
          'a withdrawal pretty-printed',
        );
      });
      ok(await team.lockstep(bob.dir, ['status']), 'the lock is readable');
      ok(await team.lockstep(ops.dir, ['withdraw']), 'the same withdrawal, as lockstep writes it');
    });

    it("12. an acquire dated ahead of the server's clock cannot take over a lease that has not ended by it", async () => {
      // Alice (holder since 1a) releases; bob, the queue head, takes a short lease.
      await team.gitOk(alice.dir, 'fetch', '--quiet', 'origin');
      ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
      const held = ok(await team.lockstep(bob.dir, ['acquire', '--ttl', '110']), 'bob acquires for 110 s');
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(ops);
        assert.equal(record.holder.identity, bob.identity);
        // Dated just past bob's expiry: by then the lease has ended; by the server's clock it has not.
        const lineAt = record.holder.expiresAt + SECOND;
        assert.ok(
          lineAt - Date.now() < 115 * SECOND && record.holder.expiresAt - Date.now() > 10 * SECOND,
          'the attack runs within the skew, while bob is live',
        );
        const taken = protocol.acquire(
          record,
          container(),
          { identity: ops.identity, tokenHash: hashToken('f'.repeat(64)), proofHash: hashProof('a'.repeat(64)) },
          lineAt,
        );
        assert.ok(taken.ok, 'at its own time the acquire is legal');
        refusedByServer(
          await pushRaw(ops, `${await forgeLike(ops, JSON.stringify(taken.record), [tip!])}:${recordRef}`),
          /acquire by ops@example\.com is dated \d+ s from the server's clock and is not legal by the server's clock/,
          "ops takes over bob's live lease early",
        );
      });
      // Control: the holder lands and releases; the normal day goes on.
      assert.equal(held.grant, 2);
      await holderLands(bob, 'b12.txt');
      ok(await team.lockstep(bob.dir, ['release']), 'bob releases after landing');
    });

    it('13. a record commit must say what its record says: a petition committed as "clear by <operator>" is refused, and history comes from the record', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(bob);
        const next = protocol.petition(record, { identity: bob.identity }, Date.now());
        assert.ok(next.ok);
        const text = JSON.stringify(next.record);
        const subject = `clear by ${ops.identity} (grant #${record.grant}): cleared ${alice.identity}: gone`;
        refusedByServer(
          await pushRaw(bob, `${await forgeLike(bob, text, [tip!], { subject })}:${recordRef}`),
          /commit message is not the one lockstep writes/,
          'a forged subject',
        );
        const asOps = {
          GIT_AUTHOR_NAME: ops.identity,
          GIT_AUTHOR_EMAIL: ops.identity,
          GIT_COMMITTER_NAME: ops.identity,
          GIT_COMMITTER_EMAIL: ops.identity,
        };
        refusedByServer(
          await pushRaw(bob, `${await forgeLike(bob, text, [tip!], { env: asOps })}:${recordRef}`),
          /author and committer derived from the new audit line/,
          'a forged author',
        );
        const early = { GIT_AUTHOR_DATE: '@1000000000 +0000', GIT_COMMITTER_DATE: '@1000000000 +0000' };
        refusedByServer(
          await pushRaw(bob, `${await forgeLike(bob, text, [tip!], { env: early })}:${recordRef}`),
          /author and committer derived/,
          'a forged date',
        );
      });
      // Control: bob petitions through lockstep; the history's entry is his petition, from his record.
      ok(await team.lockstep(bob.dir, ['petition']), 'bob petitions');
      const history = ok(await team.lockstep(ops.dir, ['audit', '--history', '--limit', '1']), 'audit --history').history;
      assert.equal(history.length, 1);
      assert.match(history[0].summary, new RegExp(`^petition by ${bob.identity.replace('.', '\\.')} \\(grant #`));
      assert.equal(history[0].author, bob.identity);
      assert.equal(history[0].line.action, 'petition');
    });
  });
}
