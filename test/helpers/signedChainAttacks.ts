import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { decodeLinkTarget } from '../../src/core/stores/linkTarget';
import { packPage, unpackPage } from '../../src/core/stores/packedPage';
import * as path from 'node:path';
import { isChainEnvelope, readChain, storeChain, type ChainEnvelope } from '../../src/core/chain/chainLayout';
import { digestOf, stepMessage, type ChainStep } from '../../src/core/chain/signedChain';
import * as protocol from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { encodeRecord, parseRecord } from '../../src/core/recordCodec';
import { signMessage } from '../../src/core/stores/chainSignatures';
import { TABLE } from '../../src/core/stores/sql/migration';
import { recordRowKey } from '../../src/core/stores/sql/sqlDriver';
import { frameRevision, unframeRevision } from '../../src/core/stores/revisionFraming';
import { hashProof } from '../../src/core/tokens';
import { createFencingTeam, type CliResult, type FencingTeam, type FencingTeamOptions, type TeamMember } from './fencingFixture';
import { githubVerifyStep, gitlabVerifyStep } from './forgeSteps';
import { runShippedCheck } from './shippedCheck';
import { SIGNING_TEAM, signWithSshKeys } from './teamSigning';

/**
 * A signed lock page on the file, SQL (SQLite), Redis and etcd drivers (`allowedSigners` in .lockstep.json): every
 * participant holds the store's credentials (write access to its folder, to the database), and bob
 * uses them with the store's own tools: revision files framed as the driver frames them, an SQL UPDATE. The shared remote is
 * reached through `git daemon` with the server guard installed; keys are real ed25519 keys made by
 * ssh-keygen, and every signature is checked by ssh-keygen -Y verify. bob writes a record naming
 * himself holder straight into the store, and separately sets the store back past
 * alice's acquire and acquires on top: each reads tampered in alice's clone naming the step, the
 * server guard refuses bob's landing, and `lockstep verify` fails naming the step.
 */

/** What bob does with the store's credentials: read its newest value, write one over it (returns its undo). */
export interface StoreHand {
  top(): Promise<any>;
  writeTop(value: unknown): Promise<() => Promise<void>>;
}

/** A store under attack: the team's options for it, and bob's hand on it once the team exists. */
export interface AttackedStore {
  readonly teamOptions: Partial<FencingTeamOptions>;
  hand(team: FencingTeam, key: string): StoreHand;
  /** Stops what the store needed (a server), after the team is gone. */
  dispose?(): Promise<void>;
}

export function fileHand(recordDir: string): StoreHand {
  const newest = () => {
    const numbers = fs
      .readdirSync(recordDir)
      .filter(n => /^\d{16}\.json$/.test(n))
      .map(n => Number(n.slice(0, 16)))
      .sort((a, b) => a - b);
    const number = numbers[numbers.length - 1];
    const file = path.join(recordDir, `${String(number).padStart(16, '0')}.json`);
    let text: string;
    try {
      text = decodeLinkTarget(fs.readlinkSync(file)) ?? '';
    } catch {
      text = fs.readFileSync(file, 'utf8');
    }
    const envelope = JSON.parse(unframeRevision(text) as string);
    return { number, lineage: envelope.l as string[], value: envelope.v };
  };
  return {
    // As the driver reads and stores a page: a large one packed (packedPage.ts), as bob's own Lockstep would write it.
    top: async () => unpackPage(newest().value, 'file'),
    // The next revision, exactly as the driver frames one.
    async writeTop(value) {
      const current = newest();
      const file = path.join(recordDir, `${String(current.number + 1).padStart(16, '0')}.json`);
      const lineage = [randomBytes(6).toString('hex'), ...current.lineage].slice(0, 32);
      fs.writeFileSync(file, frameRevision(JSON.stringify({ l: lineage, v: packPage(value, 'file') })), { mode: 0o600, flag: 'wx' });
      return async () => fs.unlinkSync(file);
    },
  };
}

export function sqliteHand(database: string, key: string): StoreHand {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3');
  const row = recordRowKey(key);
  const read = () => {
    const db = new Database(database);
    try {
      return db.prepare(`SELECT record FROM ${TABLE} WHERE key_hash = ?`).get(row).record as string;
    } finally {
      db.close();
    }
  };
  const write = (text: string) => {
    const db = new Database(database);
    try {
      assert.equal(db.prepare(`UPDATE ${TABLE} SET record = ?, revision = revision + 1 WHERE key_hash = ?`).run(text, row).changes, 1);
    } finally {
      db.close();
    }
  };
  return {
    top: async () => unpackPage(JSON.parse(read()), 'sql'),
    async writeTop(value) {
      const before = read();
      write(JSON.stringify(packPage(value, 'sql')));
      return async () => write(before);
    },
  };
}

/** The file driver's store, bob's hand on it writing revision files as the driver frames them. */
export const fileStore = async (): Promise<AttackedStore> => ({
  teamOptions: { driver: 'file' },
  hand: (team, key) => fileHand(path.join(team.store, namespaceDigest('lockstep'), key.slice(0, 2), `r${key}`)),
});

/** SQLite, bob's hand on it an SQL UPDATE. */
export const sqliteStore = async (): Promise<AttackedStore> => ({
  teamOptions: { initArgs: ['--driver', 'sql'] },
  hand: (team, key) => sqliteHand(path.join(team.store, 'lockstep.sqlite'), key),
});

/** The attacks, against the store `store` gives (called in a mocha `before`). */
/** The signing team (SIGNING_TEAM) on the attacked store, its page's record key there, and the attacker's hand on it. */
export async function teamOnAttackedStore(attacked: AttackedStore): Promise<{ team: FencingTeam; key: string; hand: StoreHand }> {
  const team = await createFencingTeam({ ...SIGNING_TEAM, ...attacked.teamOptions });
  const file = path.join(team.members[0]!.dir, '.lockstep.json');
  const key = keyDigest(JSON.parse(fs.readFileSync(file, 'utf8')).prefix ?? 'lockstep', `container:${team.container}`);
  return { team, key, hand: attacked.hand(team, key) };
}

export function signedChainAttacks(
  driver: 'file' | 'sqlite' | 'redis' | 'etcd',
  store: (context: Mocha.Context) => Promise<AttackedStore>,
): void {
  describe(`signed lock history on the ${driver} driver (the store writable by every participant; remote by git daemon)`, function () {
    this.timeout(300_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember, ops: TeamMember;
    let keys: Record<string, string>;
    let key: string;
    let hand: StoreHand;
    let attacked: AttackedStore | undefined;
    let grantSeen = 0;

    const ok = (result: CliResult, what: string): any => {
      assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      return result.json;
    };
    const status = (who: TeamMember) => team.lockstep(who.dir, ['status']);
    const settings = () => ({ leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] });

    /** The page reads tampered in `who`'s clone, naming `step`; no holder is shown. */
    async function tampered(who: TeamMember, step: string, why: RegExp, what: string): Promise<void> {
      const read = await status(who);
      assert.equal(read.code, 5, `${what}: exit 5 in ${who.name}'s clone\n${read.stdout}${read.stderr}`);
      assert.equal(read.json.error.reason, 'tampered', `${what}: ${read.stdout}`);
      assert.equal(read.json.error.revision, step, `${what}: names the step`);
      assert.match(read.json.error.message, why, what);
      assert.doesNotMatch(read.stdout, /"holder"/, `${what}: no holder is read`);
    }

    /** In the shared bare repository, `status` and `audit` prove the page as the server guard does: tampered, naming `step`. */
    async function tamperedInBare(step: string, why: RegExp, what: string): Promise<void> {
      for (const command of ['status', 'audit']) {
        const read = await team.lockstep(team.remote, [command]);
        assert.equal(read.code, 5, `${what}: ${command} exits 5 in the bare repository\n${read.stdout}${read.stderr}`);
        assert.equal(read.json.error.reason, 'tampered', `${what}: ${command}: ${read.stdout}`);
        assert.equal(read.json.error.revision, step, `${what}: ${command} names the step`);
        assert.match(read.json.error.message, why, `${what}: ${command}`);
        assert.doesNotMatch(read.stdout, /"holder"|"audit"/, `${what}: ${command} reads nothing from it`);
      }
    }

    const top = () => hand.top();
    const writeTop = (value: unknown) => hand.writeTop(value);
    /** The chain the store holds, its steps whole. */
    async function chain(): Promise<{ layout: number; steps: ChainStep[] }> {
      const read = readChain(await top());
      assert.ok(read.ok, 'the store holds a signed chain');
      return read;
    }
    const lastRecord = (c: { steps: readonly ChainStep[] }) =>
      parseRecord(JSON.parse(c.steps[c.steps.length - 1].r), driver === 'sqlite' ? 'sql' : driver, team.container, settings());
    /** A step on top of the chain, signed with `signer`'s key (null: unsigned). */
    async function forgeStep(
      c: { steps: readonly ChainStep[] },
      record: protocol.LockRecord,
      signer: string | null,
    ): Promise<{ envelope: ChainEnvelope; step: string }> {
      const r = encodeRecord(record);
      const p = digestOf(c.steps[c.steps.length - 1].r);
      const step: ChainStep = { p, r, s: signer === null ? '' : await signMessage(keys[signer], stepMessage(key, p, r)) };
      // Stored as the client stores it (layout 2: the new step a delta over the one before).
      return { envelope: storeChain([...c.steps, step]), step: digestOf(r) };
    }
    async function opsAdopts(reason: string): Promise<void> {
      ok(await team.lockstep(ops.dir, ['adopt', '--reason', reason, '--grant', String(grantSeen), '--next-id', '1000']), 'ops adopts');
      for (const who of [alice, bob, ops]) assert.equal(ok(await status(who), `${who.name} reads the adopted page`).holder, null);
    }
    async function lands(who: TeamMember, options: string[] = []): Promise<CliResult> {
      await team.gitOk(who.dir, 'pull', '--quiet', '--no-rebase', 'origin', 'main');
      await team.commit(who, `${who.name}-${randomBytes(3).toString('hex')}.txt`);
      return team.git(who.dir, ['push', '--no-verify', ...options, 'origin', 'HEAD:main'], { printsSecrets: true });
    }
    const refusedAtDoor = (result: CliResult, why: RegExp, what: string) => {
      assert.notEqual(result.code, 0, `${what}: refused\n${result.stderr}`);
      assert.match(result.stderr, /pre-receive hook declined/, `${what}: ${result.stderr}`);
      assert.match(result.stderr, why, `${what}: ${result.stderr}`);
    };
    /** `lockstep verify --push` as a forge's check runs it, in a fresh clone. */
    async function verifyInCi(range: string, options: string[] = []): Promise<CliResult> {
      const dir = path.join(team.root, `ci-${randomBytes(3).toString('hex')}`);
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, dir);
      return team.lockstep(dir, ['verify', '--push', range, '--branch', 'main', ...options]);
    }

    /**
     * The shipped push checks (docs/forges/: the GitHub workflow's job and the GitLab job) on the push OLD..NEW, each run in a
     * fresh runner with its own cache kept between runs as the file configures it (`forge` names the cache: one per forge).
     */
    const shipped = [
      githubVerifyStep('docs/forges/github/lockstep-verify.yml', 'verify-push'),
      gitlabVerifyStep('docs/forges/gitlab/lockstep-verify.gitlab-ci.yml', 'lockstep-verify-push'),
    ];
    async function shippedChecks(old: string, now: string): Promise<{ forge: string; code: number | null; out: string }[]> {
      const out = [];
      for (const step of shipped) {
        const run = await runShippedCheck({
          step,
          dir: path.join(team.root, `ci-${step.forge}-${randomBytes(3).toString('hex')}`),
          remote: team.remoteUrl,
          checkout: now,
          context: {
            'github.event.before': old,
            'github.event.after': now,
            'github.ref_name': 'main',
            CI_COMMIT_BEFORE_SHA: old,
            CI_COMMIT_SHA: now,
            CI_COMMIT_BRANCH: 'main',
            // The store's credentials as the CI's secrets (the file driver needs none).
            'secrets.LOCKSTEP_DATABASE_URL': team.env.LOCKSTEP_DATABASE_URL ?? '',
            'secrets.LOCKSTEP_REDIS_URL': team.env.LOCKSTEP_REDIS_URL ?? '',
          },
          cache: path.join(team.root, 'forge-cache', step.forge),
          env: team.env,
          cli: team.cli,
        });
        out.push({ forge: step.forge, ...run });
      }
      return out;
    }

    before(async function () {
      attacked = await store(this);
      ({ team, key, hand } = await teamOnAttackedStore(attacked));
      [alice, bob, ops] = team.members;
      keys = await signWithSshKeys(team, [alice, bob, ops], ops, [alice, bob]);
    });
    after(async () => {
      team?.dispose();
      await attacked?.dispose?.();
    });

    it("turning signing on: the unsigned page reads tampered until an operator's signed adopt starts its chain", async () => {
      const plain = await top();
      assert.ok(!isChainEnvelope(plain));
      await tampered(alice, digestOf(JSON.stringify(plain)), /no signed chain/, 'the page written before signing');
      grantSeen = plain.grant;
      await opsAdopts('signing turned on');
      assert.equal((await chain()).steps.length, 1);
      // The guard pins allowedSigners and the store (it reads the page with the pinned path).
      ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'install the server guard');
    });

    it("control: alice's signed acquire reads fine everywhere, a fresh clone included, and she lands through the guard", async () => {
      grantSeen = ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires').grant;
      assert.equal(ok(await status(bob), 'bob reads').holder.identity, alice.identity);
      const fresh: TeamMember = { name: 'carol', identity: 'carol@example.com', dir: path.join(team.root, 'carol') };
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, fresh.dir);
      await team.gitOk(fresh.dir, 'config', 'user.email', fresh.identity);
      assert.equal(ok(await status(fresh), 'a fresh clone proves the window').holder.identity, alice.identity);
      assert.equal(
        ok(await team.lockstep(team.remote, ['status']), 'the shared bare repository proves it as the guard does').holder.identity,
        alice.identity,
      );
      assert.equal((await chain()).steps.length, 2);
      assert.equal((await chain()).layout, 2, 'written in layout 2 (the acquire a delta over the adopt)');
      const from = team.remoteSha();
      ok(await lands(alice), 'alice lands under her grant');
      const checked = await verifyInCi(`${from}..${team.remoteSha()}`);
      assert.equal(checked.json.identities, 'proven', `${checked.stdout}${checked.stderr}`);
    });

    it('a page in a later chain layout than this version reads is refused as such: not free, not tampered, and says to upgrade', async () => {
      const undo = await writeTop({ lockstepChain: 3, steps: [{ future: true }] });
      const read = await status(alice);
      assert.notEqual(read.code, 0, `refused: ${read.stdout}${read.stderr}`);
      assert.notEqual(read.json?.error?.reason, 'tampered', read.stdout);
      assert.match(read.json?.error?.message ?? '', /newer version of Lockstep: .*layout 3.* Upgrade Lockstep/, read.stdout);
      assert.doesNotMatch(read.stdout, /"holder"/, 'no holder, and not free');
      // An operator of this version does not adopt over it (it is newer, not tampered): refused, the page left as it is.
      const adopt = await team.lockstep(ops.dir, [
        'adopt',
        '--reason',
        'an older operator',
        '--grant',
        String(grantSeen + 1),
        '--next-id',
        '1000',
      ]);
      assert.equal(adopt.code, 5, `the adopt is refused: ${adopt.stdout}${adopt.stderr}`);
      assert.match(adopt.json?.error?.message ?? '', /newer version of Lockstep: .*layout 3.* do not adopt over it/, adopt.stdout);
      assert.deepEqual(await top(), { lockstepChain: 3, steps: [{ future: true }] }, 'the newer page is not overwritten');
      await undo();
      assert.equal(ok(await status(alice), 'the layout 2 page reads again').holder.identity, alice.identity);
    });

    it('bob writes a record naming himself holder into the store: tampered in every clone, refused at the door, the check fails naming the step', async () => {
      const c = await chain();
      const record = lastRecord(c);
      const now = Date.now();
      const grant = record.grant + 1;
      const proof = randomBytes(32).toString('hex');
      const forged: protocol.LockRecord = {
        ...record,
        grant,
        holder: {
          identity: bob.identity,
          grant,
          tokenHash: 'a'.repeat(64),
          proofHash: hashProof(proof),
          grantedAt: now,
          expiresAt: now + 3_600_000,
          ttlMs: 3_600_000,
        },
        audit: [...record.audit, { at: now, who: bob.identity, action: 'acquire', grant, outcome: 'done' }],
      };
      // Unsigned, and signed by bob in alice's name (a legal release of hers): each read tampered, then taken back out.
      const h = record.holder!;
      const released = protocol.release(record, { identity: h.identity, tokenHash: h.tokenHash, grant: h.grant }, now, {});
      assert.ok(released.ok && released.record);
      for (const [what, forgery, why] of [
        ['unsigned', await forgeStep(c, forged, null), /not signed/],
        [
          "bob signs alice's release",
          await forgeStep(c, released.record, 'bob'),
          /gives bob@example\.com, but its audit line acts as alice@example\.com/,
        ],
      ] as const) {
        const undo = await writeTop(forgery.envelope);
        await tampered(alice, forgery.step, why, what);
        await undo();
      }
      // Signed with bob's own key: no legal transition while alice holds the live lease.
      const attack = await forgeStep(c, forged, 'bob');
      await writeTop(attack.envelope);
      await tampered(alice, attack.step, /not what acquire by bob@example\.com/, "bob's signed acquire over alice's grant");
      await tampered(bob, attack.step, /not what acquire by bob@example\.com/, "in bob's own clone");
      await tamperedInBare(attack.step, /not what acquire by bob@example\.com/, "bob's signed acquire, read where the guard runs");
      const before = team.remoteSha();
      refusedAtDoor(
        await lands(bob, ['-o', `lockstep-grant=${grant}`, '-o', `lockstep-proof=${proof}`]),
        new RegExp(`tampered: its history step ${attack.step.slice(0, 12)}`),
        "bob's landing under his forged grant",
      );
      assert.equal(team.remoteSha(), before, 'main did not move');
      const check = await verifyInCi(`${before}..${before}`);
      assert.equal(check.code, 5, `the check reads a tampered page: ${check.stdout}${check.stderr}`);
      assert.equal(check.json.error.reason, 'tampered');
      assert.equal(check.json.error.revision, attack.step);
      grantSeen = grant;
      await opsAdopts('bob wrote himself holder');
    });

    it("bob drops alice's acquire from the store and acquires on top: the guard and alice's clone saw it, refuse it and name his step", async () => {
      const beforeAcquire = await top();
      grantSeen = ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires').grant;
      const from = team.remoteSha();
      ok(await lands(alice), 'alice lands (the guard proves the page and keeps its witness)');
      // The forge's checks on alice's push, as shipped: each keeps its witness in the forge's cache between runs.
      for (const seen of await shippedChecks(from, team.remoteSha())) {
        assert.match(seen.out, /Identities on the lock page are proven/, `${seen.forge}: ${seen.out}`);
        assert.ok(fs.existsSync(path.join(team.root, 'forge-cache', seen.forge, 'page')), `${seen.forge}: the cache kept the witness`);
      }
      // bob sets the store back to before alice's acquire (a revision he kept), forgets what his own clone saw, and acquires.
      await writeTop(beforeAcquire);
      for (const name of fs.readdirSync(path.join(bob.dir, '.git', 'lockstep'))) {
        if (name.startsWith('verified-')) fs.unlinkSync(path.join(bob.dir, '.git', 'lockstep', name));
      }
      const mine = ok(await team.lockstep(bob.dir, ['acquire']), 'bob acquires on the page set back');
      assert.equal(mine.grant, grantSeen, "bob got alice's grant number again");
      const c = await chain();
      const step = digestOf(c.steps[c.steps.length - 1].r);
      const before = team.remoteSha();
      refusedAtDoor(
        await lands(bob),
        new RegExp(
          `${step.slice(0, 12)} is not proven — the page no longer holds the step this reader proved last \\(acquire by alice@example\\.com`,
        ),
        "bob's landing",
      );
      assert.equal(team.remoteSha(), before, 'main did not move');
      await tampered(alice, step, /set back past it/, "alice's clone saw her acquire");
      await tamperedInBare(step, /set back past it/, 'the bare repository starts from what the guard proved');
      // The shipped checks, whose cache kept the witness, saw alice's acquire too: each fails, naming bob's step.
      for (const check of await shippedChecks(before, before)) {
        assert.equal(check.code, 5, `${check.forge}: the check reads a tampered page: ${check.out}`);
        assert.match(
          check.out,
          new RegExp(`tampered: its history step ${step.slice(0, 12)} is not proven — .*set back past it`),
          check.forge,
        );
      }
      // The same check by hand (--json), naming the whole step.
      const witness = path.join(team.root, 'ci-cache', 'witness');
      fs.mkdirSync(path.dirname(witness), { recursive: true });
      fs.copyFileSync(path.join(team.root, 'forge-cache', 'github', 'page'), witness);
      const check = await verifyInCi(`${before}..${before}`, ['--witness', witness]);
      assert.equal(check.code, 5, `the check reads a tampered page: ${check.stdout}${check.stderr}`);
      assert.equal(check.json.error.revision, step);
      assert.match(check.json.error.message, /set back past it/);
      // A check with no witness cannot tell (README "Threat model"): it proves bob's window afresh.
      assert.notEqual((await verifyInCi(`${before}..${before}`)).code, 5);
    });
  });
}
