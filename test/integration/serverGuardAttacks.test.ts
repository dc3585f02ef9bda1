import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { keyDigest, namespaceDigest } from '../../src/core/names';
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

for (const transport of (process.env.ONLY_TRANSPORT ? [process.env.ONLY_TRANSPORT as 'path'] : ['path', 'daemon'] as const)) {
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
        members: ['alice', 'bob', 'ops'], operators: ['ops@example.com'], driver: 'git', transport,
        initArgs: ['--protect', 'main', '--protect', 'release'],
      });
      [alice, bob, ops] = team.members;
      recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    });
    after(() => team?.dispose());

    it('1a. the page cannot be replaced, nor another page created beside it', async () => {
      assert.notEqual(await remoteRef(recordRef), '', 'lockstep init created the page');
      await unmoved(async () => {
        const record = { v: 1, container: team.container, grant: 7, holder: { identity: bob.identity, grant: 7, tokenHash: hashToken('b'.repeat(64)), proofHash: hashProof('c'.repeat(64)), grantedAt: Date.now(), expiresAt: Date.now() + 3_600_000 },
          releasedAt: null, queue: [], ranges: [], nextId: 1, blocks: [], audit: [{ at: Date.now(), who: bob.identity, action: 'acquire', grant: 7, outcome: 'done' }] };
        const commit = await forge(bob, { 'record.json': JSON.stringify(record) }, []);
        // `lockstep init` created the page before the guard was installed, so this replaces it.
        refusedByServer(await pushRaw(bob, `${commit}:${recordRef}`), /refused the lock record's update: the update rewinds, replaces or skips/, 'bob replaces the page with one at grant 7');
        const elsewhere = `refs/lockstep/${namespaceDigest('mine')}/records/${'e'.repeat(64)}`;
        refusedByServer(await pushRaw(bob, `${commit}:${elsewhere}`), /keeps only its own container's lock refs/, 'bob creates a page under another namespace');
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
        const mine = { ...record.holder, identity: bob.identity, tokenHash: hashToken('d'.repeat(64)), proofHash: hashProof('e'.repeat(64)) };
        const same = { ...record, holder: mine, audit: [...record.audit, line(1)] };
        refusedByServer(await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(same) }, [tip!])}:${recordRef}`), /not what acquire by bob/, 'same grant');
        const next = { ...record, grant: 2, holder: { ...mine, grant: 2 }, audit: [...record.audit, line(2)] };
        refusedByServer(await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(next) }, [tip!])}:${recordRef}`), /not what acquire by bob/, 'grant + 1 while alice holds');
        await team.commit(bob, 'b1.txt');
        refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main', ['-o', 'lockstep-grant=2', '-o', `lockstep-proof=${'e'.repeat(64)}`]),
          /refused refs\/heads\/main: Grant #2|not valid for the current grant #1/, 'bob lands with a proof he minted');
      });
      await holderLands(alice, 'a2.txt');
    });

    it('2. rewinds, unrelated histories and fake compactions of the lock ref are refused; a real compaction is accepted', async () => {
      const before = await fetchRecord(bob);
      ok(await team.lockstep(alice.dir, ['lease-ids', '--to', bob.identity, '--count', '5', '--new-identity']), 'alice leases ids (a holder transition with her proof)');
      ok(await team.lockstep(alice.dir, ['heartbeat']), 'alice heartbeats');
      await unmoved(async () => {
        refusedByServer(await pushRaw(bob, `${before.tip}:${recordRef}`), /rewinds, replaces or skips/, 'rewind to before the lease');
        const unrelated = await forge(bob, { 'record.json': JSON.stringify(before.record) }, []);
        refusedByServer(await pushRaw(bob, `${unrelated}:${recordRef}`), /rewinds, replaces or skips/, 'an unrelated history');
        const now = await fetchRecord(bob);
        const snapshot = await forge(bob, { 'record.json': JSON.stringify(now.record), 'audit.log': '{"revision":"x","time":0,"author":"bob","summary":"nothing happened"}\n' },
          [], 'lockstep: history compacted\n\nLockstep-Snapshot: 1');
        refusedByServer(await pushRaw(bob, `${snapshot}:${recordRef}`), /a compaction must keep the record unchanged|whole audit history/, 'a fake compaction');
      });
      const compacted = ok(await team.lockstep(ops.dir, ['compact']), 'ops compacts');
      assert.ok(compacted.squashed >= 3);
      assert.equal((await team.gitOk(team.remote, 'rev-list', '--count', recordRef)), '1', 'the lock ref is one snapshot commit now');
      ok(await team.lockstep(alice.dir, ['heartbeat']), 'alice heartbeats on top of the snapshot');
    });

    it('3. a huge grant or a damaged record cannot make the lock unusable', async () => {
      await unmoved(async () => {
        const { tip, record } = await fetchRecord(bob);
        const huge = { ...record, grant: Number.MAX_SAFE_INTEGER, holder: { ...record.holder, grant: Number.MAX_SAFE_INTEGER },
          audit: [...record.audit, { at: Date.now(), who: bob.identity, action: 'acquire', grant: Number.MAX_SAFE_INTEGER, outcome: 'done' }] };
        refusedByServer(await pushRaw(bob, `${await forge(bob, { 'record.json': JSON.stringify(huge) }, [tip!])}:${recordRef}`), /acquire/, 'grant 2^53 - 1');
        refusedByServer(await pushRaw(bob, `${await forge(bob, { 'record.json': '{ "v": 1, "grant": ' }, [tip!])}:${recordRef}`), /damaged/, 'a damaged record');
        refusedByServer(await pushRaw(bob, `:${recordRef}`), /never deleted/, 'deleting the lock ref');
      });
      ok(await team.lockstep(bob.dir, ['petition']), 'bob can still petition: the lock is usable');
    });

    it('4. a .lockstep.json that clients cannot read (a symbolic link, a BOM) unprotects nothing', async () => {
      await unmoved(async () => {
        for (const [what, write] of [
          ['a symbolic link', () => { fs.rmSync(path.join(bob.dir, '.lockstep.json')); fs.symlinkSync('README.md', path.join(bob.dir, '.lockstep.json')); }],
          ['a UTF-8 BOM', () => { const f = path.join(bob.dir, '.lockstep.json'); fs.writeFileSync(f, '\ufeff' + fs.readFileSync(f, 'utf8')); }],
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
        refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/release'), /refused refs\/heads\/release: This push carries no proof/, 'creating release');
        const file = path.join(bob.dir, '.lockstep.json');
        fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), protectedBranches: [] }, null, 2));
        await team.gitOk(bob.dir, 'commit', '--quiet', '-am', 'nothing is protected');
        refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main'), /carries no proof/, 'main unprotecting itself');
        refusedByServer(await pushRaw(bob, ':refs/heads/main'), /carries no proof/, 'deleting main');
        // An alias whose target does not exist yet: a push to it would create the protected branch.
        await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/rc', 'refs/heads/release');
        refusedByServer(await pushRaw(bob, 'origin/main:refs/heads/rc'), /refused refs\/heads\/rc: This push carries no proof/, 'creating release through a dangling alias');
        await team.gitOk(team.remote, 'symbolic-ref', '--delete', 'refs/heads/rc');
      });
      // Control: the holder creates the release branch.
      await team.gitOk(alice.dir, 'fetch', '--quiet', 'origin');
      ok(await team.git(alice.dir, ['push', 'origin', 'origin/main:refs/heads/release']), 'alice creates release');
    });

    it('6. the pusher\'s LOCKSTEP_* variables cannot point the guard at a record they control', async () => {
      const own = path.join(team.root, 'bob-own.git');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', own);
      await unmoved(async () => {
        await team.gitOk(bob.dir, 'reset', '--quiet', '--hard', 'origin/main');
        await team.commit(bob, 'b6.txt');
        const envs: Record<string, string>[] = [{ LOCKSTEP_GIT_REMOTE: own }, { LOCKSTEP_PREFIX: 'bob' }, { LOCKSTEP_DRIVER: 'memory' }, { LOCKSTEP_PATH: path.join(team.root, 'bob-store') }];
        for (const env of envs) {
          refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/main', [], env), /carries no proof|not valid/, `with ${Object.keys(env)[0]}`);
        }
      });
    });

    it('7. a symbolic ref on the server that leads to main is main', async () => {
      await team.gitOk(team.remote, 'symbolic-ref', 'refs/heads/trunk', 'refs/heads/main');
      await unmoved(async () => {
        refusedByServer(await pushRaw(bob, 'HEAD:refs/heads/trunk'), /refused refs\/heads\/trunk: This push carries no proof/, 'bob pushes trunk');
      });
      // Control: the holder's proof goes with every push, so the holder may move main through trunk.
      await team.gitOk(alice.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const sha = await team.commit(alice, 'a7.txt');
      ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/trunk']), 'alice through trunk');
      assert.equal(await remoteRef('refs/heads/main'), sha);
    });

    it('8. the holder\'s proof reaches no other remote, no signed-push certificate, no recursing submodule push', async () => {
      const fork = path.join(team.root, 'fork.git');
      const seen = path.join(team.root, 'fork-options');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', fork);
      await team.gitOk(fork, 'config', 'receive.advertisePushOptions', 'true');
      fs.writeFileSync(path.join(fork, 'hooks', 'pre-receive'), `#!/bin/sh\ncat >/dev/null\necho "count=\${GIT_PUSH_OPTION_COUNT:-0} $GIT_PUSH_OPTION_0 $GIT_PUSH_OPTION_1" >> '${seen}'\n`, { mode: 0o755 });
      await team.gitOk(alice.dir, 'remote', 'add', 'fork', fork);
      await team.gitOk(alice.dir, 'branch', '-f', 'feature', 'HEAD');

      const toFork = await team.git(alice.dir, ['push', 'fork', 'feature']);
      assert.notEqual(toFork.code, 0);
      assert.match(toFork.stderr, /lockstep: This push goes to fork, not the container's shared remote, and would hand it the proof of your lock\. Push there without it: git -c push\.pushOption= push fork/);
      assert.ok(!fs.existsSync(seen), 'the fork heard nothing');
      ok(await team.git(alice.dir, ['-c', 'push.pushOption=', 'push', 'fork', 'feature']), 'the way the message gives');
      assert.equal(fs.readFileSync(seen, 'utf8').trim(), 'count=0', 'the fork received no push option');

      const signed = await team.git(alice.dir, ['push', '--signed', 'origin', 'HEAD:refs/heads/main']);
      assert.notEqual(signed.code, 0);
      assert.match(signed.stderr, /A signed push stores its push options, and so the proof of your lock, in the remote's push certificate/);
      const recursing = await team.git(alice.dir, ['push', '--recurse-submodules=on-demand', 'origin', 'HEAD:refs/heads/main']);
      assert.notEqual(recursing.code, 0);
      assert.match(recursing.stderr, /hands the push options .* to the submodules' pushes/);
      assert.equal(await team.gitOk(alice.dir, 'config', 'push.recurseSubmodules'), 'check', 'while the proof is set, no push recurses by configuration');
      const objects = await team.gitOk(fork, 'cat-file', '--batch-all-objects', '--batch-check');
      for (const secret of team.secrets()) {
        assert.ok(!fs.readFileSync(seen, 'utf8').includes(secret));
        for (const line of objects.split('\n')) {
          const sha = line.split(' ')[0];
          if (sha && line.includes(' blob ')) assert.ok(!(await team.gitOk(fork, 'cat-file', '-p', sha)).includes(secret), 'no object of the fork holds a proof');
        }
      }
      team.assertNoSecretLeaked();
    });

    it('9. without an authenticating server, identities are declared: a clear in an operator\'s name is the threat model\'s stated limit', async () => {
      // The control for the HTTP suite, where the server names the pusher and this is refused.
      const status = ok(await team.lockstep(bob.dir, ['status']), 'status');
      assert.equal(status.holder.identity, alice.identity);
      const early = await team.lockstep(bob.dir, ['clear', '--reason', 'mine now'], { env: { LOCKSTEP_IDENTITY: ops.identity } });
      assert.equal(early.code, 1, 'a live holder is never cleared, whoever asks');
      assert.equal(early.json.error.reason, 'not-silent');
    });
  });
}
