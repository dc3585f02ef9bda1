import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container } from '../../src/core/container/container';
import { openDriver } from '../../src/core/drivers';
import * as protocol from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { encodeRecord, parseRecord } from '../../src/core/recordCodec';
import { stampEnv, stampOf, transitionSubject } from '../../src/core/stores/git/recordCommit';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { signWithSshKeys } from '../helpers/teamSigning';

/**
 * A signed lock page on the git driver (`allowedSigners` in .lockstep.json), attacked by a teammate
 * who may push anything: the shared remote is a forge with NO hooks (anyone may write the lock ref),
 * reached by its path and through `git daemon`. Keys are real ed25519 keys made by ssh-keygen, and
 * every signature is checked by git's own verification (ssh-keygen -Y verify). Each attack must read
 * as a tampered page (exit 5) naming the forged commit, with bob never read as holder; an operator's
 * signed adopt repairs it. A last part installs the server guard and checks that it refuses the same
 * forgeries at the door.
 */

for (const transport of ['path', 'daemon'] as const) {
  describe(`signed lock history on the git driver (a forge with no hooks, remote by ${transport})`, function () {
    this.timeout(300_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember, ops: TeamMember;
    let recordRef: string;
    let keys: Record<string, string>;
    let grantSeen = 0;

    const ok = (result: CliResult, what: string): any => {
      assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      return result.json;
    };
    const status = (who: TeamMember) => team.lockstep(who.dir, ['status']);
    /**
     * The page reads tampered in `who`'s clone, naming `commit`: status, audit and audit --history alike; no holder and
     * no audit line is shown. `fromRemote`: also status --remote (no clone, no witness: it proves the page from its start).
     */
    async function tampered(who: TeamMember, commit: string, why: RegExp, what: string, fromRemote = false): Promise<void> {
      const readers: [string, () => Promise<CliResult>][] = [
        [`status in ${who.name}'s clone`, () => status(who)],
        [`audit in ${who.name}'s clone`, () => team.lockstep(who.dir, ['audit'])],
        [`audit --history in ${who.name}'s clone`, () => team.lockstep(who.dir, ['audit', '--history'])],
      ];
      if (fromRemote) readers.push(['status --remote', () => team.lockstep(team.root, ['status', '--remote', team.remoteUrl])]);
      for (const [reader, reading] of readers) {
        const read = await reading();
        assert.equal(read.code, 5, `${what}: exit 5 from ${reader}\n${read.stdout}${read.stderr}`);
        assert.equal(read.json.ok, false);
        assert.equal(read.json.error.reason, 'tampered', `${what}, ${reader}: ${read.stdout}`);
        assert.equal(read.json.error.revision, commit, `${what}, ${reader}: names the forged commit`);
        assert.match(read.json.error.message, why, `${what}, ${reader}`);
        assert.doesNotMatch(read.stdout, /"holder"|"audit"|"history"/, `${what}, ${reader}: no holder and no line is read`);
      }
    }
    /** The clone's tip of the lock ref, and its record. */
    async function remoteRecord(who: TeamMember): Promise<{ tip: string; text: string; record: protocol.LockRecord }> {
      await team.gitOk(who.dir, 'fetch', '--quiet', 'origin', `+${recordRef}:refs/forge/tip`);
      const tip = await team.gitOk(who.dir, 'rev-parse', 'refs/forge/tip');
      const text = await team.gitOk(who.dir, 'cat-file', 'blob', `${tip}:record.json`);
      return { tip, text, record: parseRecord(JSON.parse(text), 'git', team.container, settings()) };
    }
    const settings = () => ({ leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] });
    /**
     * A record commit exactly as a lockstep client writes it (subject, author and date from the new
     * audit line), signed with `key` (a path) or unsigned (null).
     */
    async function forgeLike(who: TeamMember, recordText: string, parents: readonly string[], key: string | null): Promise<string> {
      const line = JSON.parse(recordText).audit.at(-1);
      const blob = (await team.git(who.dir, ['hash-object', '-w', '--stdin'], { input: recordText })).stdout.trim();
      const tree = (await team.git(who.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
      const message = `${transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`;
      const args =
        key === null ? ['commit-tree', '--no-gpg-sign'] : ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`, 'commit-tree', '-S'];
      const commit = await team.git(who.dir, [...args, tree, ...parents.flatMap(p => ['-p', p])], {
        input: message,
        env: stampEnv(stampOf(line)),
      });
      assert.equal(commit.code, 0, commit.stderr);
      return commit.stdout.trim();
    }
    /** Pushes a commit to the lock ref with force: on a forge nothing stands in the way. */
    async function forcePush(who: TeamMember, commit: string): Promise<void> {
      ok(
        await team.git(who.dir, ['push', '--quiet', '--no-verify', '--force', 'origin', `${commit}:${recordRef}`]),
        `${who.name} force-pushes the lock ref`,
      );
    }
    /** The operator's signed adopt repairs the page; everyone then reads it, free. */
    async function opsAdopts(reason: string): Promise<void> {
      const adopted = ok(
        await team.lockstep(ops.dir, ['adopt', '--reason', reason, '--grant', String(grantSeen), '--next-id', '1000']),
        'ops adopts',
      );
      assert.equal(adopted.grant, grantSeen);
      for (const who of [alice, bob, ops]) assert.equal(ok(await status(who), `${who.name} reads the adopted page`).holder, null);
    }
    async function aliceAcquires(): Promise<void> {
      const got = ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires');
      grantSeen = got.grant;
    }

    before(async () => {
      team = await createFencingTeam({
        members: ['alice', 'bob', 'ops'],
        operators: ['ops@example.com'],
        driver: 'git',
        transport,
        serverHooks: false,
        clientHooks: false,
      });
      [alice, bob, ops] = team.members;
      // init --server-guard makes holders push a proof as a push option; the forge accepts them and checks nothing.
      await team.gitOk(team.remote, 'config', 'receive.advertisePushOptions', 'true');
      recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
      keys = await signWithSshKeys(team, [alice, bob, ops], ops, [alice, bob]);
    });
    after(() => team?.dispose());

    it("turning signing on: the unsigned history reads tampered until an operator's signed adopt restarts it", async () => {
      const { tip } = await remoteRecord(alice);
      await tampered(alice, tip, /not signed/, 'the page made by an unsigned init', true);
      await opsAdopts('signing turned on');
    });

    it("control: alice's signed acquire and release read fine, in her clone and in a fresh clone", async () => {
      await aliceAcquires();
      assert.equal(ok(await status(bob), 'bob reads').holder.identity, alice.identity);
      // Without a clone (no witness): proven from the operator's adopt, as a fresh clone proves it.
      const remote = ok(await team.lockstep(team.root, ['status', '--remote', team.remoteUrl]), 'status --remote proves the page');
      assert.equal(remote.holder.identity, alice.identity);
      const history = ok(await team.lockstep(bob.dir, ['audit', '--history']), 'audit --history on the proven page').history;
      assert.deepEqual(
        history.slice(-2).map((e: { author: string }) => e.author),
        [ops.identity, alice.identity],
      );
      const fresh: TeamMember = { name: 'carol', identity: 'carol@example.com', dir: path.join(team.root, 'carol') };
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, fresh.dir);
      await team.gitOk(fresh.dir, 'config', 'user.email', fresh.identity);
      assert.equal(ok(await status(fresh), 'a fresh clone verifies from the adopt').holder.identity, alice.identity);
      ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
      assert.equal(ok(await status(fresh), 'the fresh clone reads the release').holder, null);
      assert.ok(fs.existsSync(path.join(fresh.dir, '.git', 'lockstep')), 'the fresh clone keeps its verified checkpoint');
      await aliceAcquires();
    });

    it('audit --history lists exactly the proven history: a step pushed between the proof and the listing is not listed unproven', async () => {
      // bob's container in this process, its driver the real git driver with one seam: right after the page is proven,
      // ops pushes a signed petition (a real interleaving, made deterministic by the seam, no timing involved).
      const plain = await Container.open({ cwd: bob.dir, env: team.env });
      const inner = await openDriver(plain.config);
      let interleave: (() => Promise<void>) | undefined = async () => {
        ok(await team.lockstep(ops.dir, ['petition', '--note', 'between the reads']), 'ops petitions meanwhile');
      };
      const proven: string[] = [];
      const seamed = new Proxy(inner, {
        get(target, property) {
          if (property === 'verifyHistory') {
            return async (revision: string, policy: unknown) => {
              await (target as any).verifyHistory(revision, policy);
              proven.push(revision);
              const step = interleave;
              interleave = undefined;
              await step?.();
            };
          }
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const container = await Container.open({ cwd: bob.dir, env: team.env, driverInstance: seamed });
      try {
        const listed = (await container.history(10_000))!;
        assert.equal(proven.length, 1);
        assert.equal(listed[0].revision, proven[0], 'the newest step listed is the one proven');
        assert.ok(!listed.some(e => e.line?.action === 'petition'), 'the petition pushed after the proof is not listed');
      } finally {
        await container.close();
        await inner.close();
      }
      // Read again (proven anew), it is listed.
      const again = ok(await team.lockstep(bob.dir, ['audit', '--history']), 'audit --history after the petition').history;
      assert.equal(again.at(-1).line.action, 'petition');
      ok(await team.lockstep(ops.dir, ['withdraw']), 'ops withdraws');
    });

    it('an unsigned commit naming bob holder reads tampered, and the operator repairs it', async () => {
      const { tip, record } = await remoteRecord(bob);
      const now = Date.now();
      const forged = {
        ...record,
        grant: record.grant + 1,
        holder: { ...record.holder!, identity: bob.identity, grant: record.grant + 1 },
        audit: [
          ...record.audit,
          { at: now, who: bob.identity, action: 'acquire' as const, grant: record.grant + 1, outcome: 'done' as const },
        ],
      };
      const commit = await forgeLike(bob, encodeRecord(forged), [tip], null);
      await forcePush(bob, commit);
      await tampered(alice, commit, /not signed/, "unsigned forgery, alice's clone", true);
      await tampered(bob, commit, /not signed/, "unsigned forgery, bob's own clone");
      grantSeen = record.grant + 1;
      await opsAdopts('bob forged an unsigned acquire');
      await aliceAcquires();
    });

    it("bob's key signing a legal step in alice's name reads tampered", async () => {
      const { tip, record } = await remoteRecord(bob);
      const h = record.holder!;
      const released = protocol.release(record, { identity: h.identity, tokenHash: h.tokenHash, grant: h.grant }, Date.now(), {});
      assert.ok(released.ok && released.record);
      const commit = await forgeLike(bob, encodeRecord(released.record), [tip], keys.bob);
      await forcePush(bob, commit);
      await tampered(
        alice,
        commit,
        new RegExp(`gives ${bob.identity.replace('.', '\\.')}, but its audit line acts as ${alice.identity.replace('.', '\\.')}`),
        'bob signs for alice',
        true,
      );
      await opsAdopts('bob signed for alice');
      await aliceAcquires();
    });

    it("a replay of alice's older signed step (its signature copied onto a new commit) reads tampered", async () => {
      // alice's signed acquire, then her release on top of it.
      const older = (await remoteRecord(bob)).tip;
      ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
      const { tip } = await remoteRecord(bob);
      // alice's signed acquire, with its parent changed to the current tip: the signature is hers, the bytes are not.
      const raw = await team.gitOk(bob.dir, 'cat-file', 'commit', older);
      const replayed = `${raw.replace(/^parent [0-9a-f]{40}$/m, `parent ${tip}`)}\n`;
      const commit = (await team.git(bob.dir, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: replayed })).stdout.trim();
      assert.match(commit, /^[0-9a-f]{40}$/);
      await forcePush(bob, commit);
      await tampered(alice, commit, /signature does not verify/, 'a replayed signature', true);
      await opsAdopts("bob replayed alice's step");
      await aliceAcquires();
    });

    it("a step signed with GPG is judged by the allowed signers list, never by the reader's own keyring", async () => {
      // alice's own OpenPGP key, its user id her identity, ultimately trusted in her keyring (a throwaway GNUPGHOME).
      // The allowed signers list holds SSH keys only: her GPG-signed (legal) release is not proven, in her clone too.
      const gnupg = path.join(team.root, 'alice-gnupg');
      fs.mkdirSync(gnupg, { mode: 0o700 });
      const gpgEnv = { ...team.env, GNUPGHOME: gnupg } as NodeJS.ProcessEnv;
      try {
        execFileSync('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', alice.identity, 'ed25519', 'sign', 'never'], {
          env: gpgEnv,
          stdio: 'ignore',
        });
        const listed = execFileSync('gpg', ['--batch', '--with-colons', '--list-keys', alice.identity], { env: gpgEnv, encoding: 'utf8' });
        const fingerprint = /^fpr:(?:[^:]*:){8}([0-9A-F]{40,64}):/m.exec(listed)?.[1];
        assert.ok(fingerprint, listed);
        const { tip, record } = await remoteRecord(bob);
        const h = record.holder!;
        const released = protocol.release(record, { identity: h.identity, tokenHash: h.tokenHash, grant: h.grant }, Date.now(), {});
        assert.ok(released.ok && released.record);
        const text = encodeRecord(released.record);
        const line = JSON.parse(text).audit.at(-1);
        const blob = (await team.git(alice.dir, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
        const tree = (await team.git(alice.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
        const signed = await team.git(
          alice.dir,
          ['-c', 'gpg.format=openpgp', '-c', `user.signingkey=${fingerprint}`, 'commit-tree', '-S', tree, '-p', tip],
          {
            input: `${transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`,
            env: { ...stampEnv(stampOf(line)), GNUPGHOME: gnupg },
          },
        );
        assert.equal(signed.code, 0, signed.stderr);
        const commit = signed.stdout.trim();
        // git itself, with alice's keyring, calls it a good signature by alice@example.com.
        const own = await team.git(alice.dir, ['log', '-1', '--format=%G?%x1f%GS', commit], { env: { GNUPGHOME: gnupg } });
        assert.equal(own.stdout.trim(), `G\x1f${alice.identity}`, own.stderr);
        await forcePush(alice, commit);
        for (const who of [alice, bob]) {
          const read = await team.lockstep(who.dir, ['status'], { env: { GNUPGHOME: gnupg } });
          assert.equal(read.code, 5, `${who.name}'s clone: ${read.stdout}${read.stderr}`);
          assert.equal(read.json.error.reason, 'tampered');
          assert.equal(read.json.error.revision, commit);
          assert.match(read.json.error.message, /does not verify against a key the allowed signers list holds/);
        }
        grantSeen = Math.max(grantSeen, record.grant);
        await opsAdopts('alice signed with GPG');
        await aliceAcquires();
      } finally {
        execFileSync('gpgconf', ['--kill', 'all'], { env: gpgEnv, stdio: 'ignore' });
      }
    });

    it("a rewind to an older step, and a rewind rewritten with bob's own signed acquire, read tampered in clones that saw more", async () => {
      const acquired = (await remoteRecord(bob)).tip;
      ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
      const releasedTip = (await remoteRecord(alice)).tip;
      for (const who of [alice, ops]) assert.equal(ok(await status(who), `${who.name} reads alice's release`).holder, null);
      // Plain rewind: the ref set back to alice's acquire.
      await forcePush(bob, acquired);
      await tampered(alice, acquired, /rewind/, 'a rewind');
      // Rewind rewritten: back below alice's acquire, then bob's own signed, legal acquire on top.
      const below = await team.gitOk(bob.dir, 'rev-parse', `${acquired}^`);
      const base = parseRecord(
        JSON.parse(await team.gitOk(bob.dir, 'cat-file', 'blob', `${below}:record.json`)),
        'git',
        team.container,
        settings(),
      );
      const mine = protocol.acquire(
        base,
        settings(),
        { identity: bob.identity, tokenHash: 'a'.repeat(64), proofHash: 'b'.repeat(64), ttlMs: 3_600_000 },
        Date.now(),
      );
      assert.ok(mine.ok && mine.record, "bob's acquire is legal on the rewound page");
      const commit = await forgeLike(bob, encodeRecord(mine.record), [below], keys.bob);
      await forcePush(bob, commit);
      await tampered(alice, commit, /rewound and rewritten/, 'a rewind rewritten');
      await tampered(ops, commit, /rewound and rewritten/, "a rewind rewritten, in the operator's clone");
      assert.notEqual(releasedTip, commit);
      grantSeen = Math.max(grantSeen, mine.record.grant);
      await opsAdopts('bob rewound the page');
    });

    it('lockstep verify in a fresh CI clone proves the signed page first: proven, the verdict says so; a forged step fails the check as a tampered page naming it', async () => {
      // A landing on main after signing was turned on (ops's own, unannounced): the check's range.
      const from = await team.gitOk(ops.dir, 'rev-parse', 'HEAD');
      fs.writeFileSync(path.join(ops.dir, `notes-${transport}.txt`), 'a note\n');
      await team.gitOk(ops.dir, 'add', `notes-${transport}.txt`);
      await team.gitOk(ops.dir, 'commit', '--quiet', '-m', 'a note');
      await team.gitOk(ops.dir, 'push', '--quiet', '--no-verify', 'origin', 'HEAD:main');
      const to = await team.gitOk(ops.dir, 'rev-parse', 'HEAD');
      const ci: TeamMember = { name: 'ci', identity: 'ci@example.com', dir: path.join(team.root, 'ci') };
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, ci.dir);
      const check = () => team.lockstep(ci.dir, ['verify', '--push', `${from}..${to}`, '--branch', 'main']);
      const proven = await check();
      assert.equal(proven.code, 1, `a verdict on a proven page (the landing was not announced): ${proven.stdout}${proven.stderr}`);
      assert.equal(proven.json.identities, 'proven');
      assert.match(proven.json.markdown, /Identities on the lock page are proven/);
      // bob writes a step naming himself holder, unsigned, as anyone may on a forge.
      const { tip, record } = await remoteRecord(bob);
      const now = Date.now();
      const grant = record.grant + 1;
      const forged = {
        ...record,
        grant,
        holder: {
          identity: bob.identity,
          grant,
          tokenHash: 'a'.repeat(64),
          proofHash: 'b'.repeat(64),
          grantedAt: now,
          expiresAt: now + 3_600_000,
          ttlMs: 3_600_000,
        },
        audit: [...record.audit, { at: now, who: bob.identity, action: 'acquire' as const, grant, outcome: 'done' as const }],
      };
      const commit = await forgeLike(bob, encodeRecord(forged), [tip], null);
      await forcePush(bob, commit);
      const refused = await check();
      assert.equal(refused.code, 5, `the check reads a tampered page, not a verdict: ${refused.stdout}${refused.stderr}`);
      assert.equal(refused.json.error.reason, 'tampered');
      assert.equal(refused.json.error.revision, commit);
      assert.doesNotMatch(refused.stdout, /"outcome"/);
      grantSeen = grant;
      await opsAdopts('bob forged a step before the check');
    });

    it('with the server guard installed, unsigned and wrongly signed record pushes are refused at the door; signed steps pass', async () => {
      ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'install the server guard (it pins allowedSigners)');
      await aliceAcquires();
      const { tip, record } = await remoteRecord(bob);
      const petition = (who: string) => encodeRecord(protocol.petition(record, { identity: who }, Date.now()).record!);
      const push = (commit: string) => team.git(bob.dir, ['push', '--no-verify', 'origin', `${commit}:${recordRef}`]);
      const refusedAtDoor = (result: CliResult, why: RegExp, what: string) => {
        assert.notEqual(result.code, 0, `${what}: refused\n${result.stderr}`);
        assert.match(result.stderr, /pre-receive hook declined/, what);
        assert.match(result.stderr, why, what);
      };
      refusedAtDoor(
        await push(await forgeLike(bob, petition(bob.identity), [tip], null)),
        /requires signed lock records: its commit is not signed/,
        "bob's unsigned petition",
      );
      refusedAtDoor(
        await push(await forgeLike(bob, petition(ops.identity), [tip], keys.bob)),
        /gives bob@example\.com, but its audit line acts as ops@example\.com/,
        "bob signs a petition in ops's name",
      );
      assert.equal((await remoteRecord(bob)).tip, tip, 'the lock ref did not move');
      // Controls: bob's own petition through lockstep (signed with his key), and alice's release.
      ok(await team.lockstep(bob.dir, ['petition']), 'bob petitions, signed');
      ok(await team.lockstep(alice.dir, ['release']), 'alice releases, signed');
      assert.equal(ok(await status(ops), 'ops reads the page').holder, null);
      // A compaction by the operator (signed; the guard checks its signer too) reads fine everywhere, a fresh clone included.
      const byBob = await team.lockstep(bob.dir, ['compact']);
      assert.equal(byBob.code, 1, `bob, neither operator nor last actor, may not compact: ${byBob.stdout}`);
      assert.match(byBob.json.error.message, /only an operator/);
      assert.ok(ok(await team.lockstep(ops.dir, ['compact']), 'ops compacts').squashed > 1);
      for (const who of [alice, bob, ops]) assert.equal(ok(await status(who), `${who.name} reads the compacted page`).holder, null);
      const fresh: TeamMember = { name: 'dan', identity: 'dan@example.com', dir: path.join(team.root, 'dan') };
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, fresh.dir);
      await team.gitOk(fresh.dir, 'config', 'user.email', fresh.identity);
      assert.equal(ok(await status(fresh), 'a fresh clone reads the compacted page').holder, null);
    });

    it("behind the server guard, the page is repaired only by an operator's signed adopt that keeps the fence", async () => {
      // The server's administrator (trusted) leaves an unsigned step, as a page from before signing has.
      const { tip, record } = await remoteRecord(ops);
      const petitioned = encodeRecord(protocol.petition(record, { identity: alice.identity }, Date.now()).record!);
      const line = JSON.parse(petitioned).audit.at(-1);
      const blob = (await team.git(team.remote, ['hash-object', '-w', '--stdin'], { input: petitioned })).stdout.trim();
      const tree = (await team.git(team.remote, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
      const unsigned = (
        await team.git(team.remote, ['commit-tree', '--no-gpg-sign', tree, '-p', tip], {
          input: `${transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`,
          env: stampEnv(stampOf(line)),
        })
      ).stdout.trim();
      await team.gitOk(team.remote, 'update-ref', recordRef, unsigned);
      await tampered(ops, unsigned, /not signed/, 'an unsigned step behind the guard');
      // bob's own signed adopt is refused at the door (he is no operator), and so is one that lowers the grant.
      const bobAdopt = protocol.adoptPage(
        team.container,
        { ...settings(), operators: [bob.identity] },
        { identity: bob.identity, reason: 'mine', grantFloor: record.grant, nextIdFloor: record.nextId },
        Date.now(),
      );
      const byBob = await team.git(bob.dir, [
        'push',
        '--no-verify',
        '--force',
        'origin',
        `${await forgeLike(bob, encodeRecord(bobAdopt.record!), [], keys.bob)}:${recordRef}`,
      ]);
      assert.notEqual(byBob.code, 0);
      assert.match(byBob.stderr, /pre-receive hook declined/);
      assert.match(byBob.stderr, /not what adopt by bob@example\.com/);
      const lowered = await team.lockstep(ops.dir, ['adopt', '--reason', 'lowered', '--grant', '0', '--next-id', '1']);
      assert.notEqual(lowered.code, 0, 'an adopt that lowers the grant is refused by the guard');
      ok(
        await team.lockstep(ops.dir, [
          'adopt',
          '--reason',
          'unsigned step',
          '--grant',
          String(record.grant),
          '--next-id',
          String(record.nextId),
        ]),
        'ops adopts, signed, through the guard',
      );
      for (const who of [alice, bob, ops]) assert.equal(ok(await status(who), `${who.name} reads the repaired page`).holder, null);
    });
  });
}
