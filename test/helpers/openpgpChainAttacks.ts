import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { readChain, storeChain, type ChainEnvelope } from '../../src/core/chain/chainLayout';
import { digestOf, stepMessage, type ChainStep } from '../../src/core/chain/signedChain';
import * as protocol from '../../src/core/lockRecord';
import { encodeRecord, parseRecord } from '../../src/core/recordCodec';
import type { CliResult, FencingTeam, TeamMember } from './fencingFixture';
import { type AttackedStore, type StoreHand, teamOnAttackedStore } from './signedChainAttacks';
import { exportKey, type GpgPerson, gpgSign, gpgSigningTeam, stopAgents, trustInHome } from './teamOpenpgp';

/**
 * A signed lock page on a store every participant can write (file, SQL, Redis, etcd), whose people
 * sign with GPG (`openpgpSigners` and `openpgpKeys` beside `allowedSigners`): each step of the chain
 * carries a detached OpenPGP signature that alice's own gpg made over the step's bytes. Keys are real
 * ed25519 keys made by gpg in a throwaway GNUPGHOME per person; the operator signs with SSH, so one
 * chain mixes both kinds. alice's GPG-signed steps are proven in bob's clone, a fresh clone, the
 * shared repository where the server guard runs, and by `lockstep verify` in a fresh CI clone; a step
 * bob writes into the store signed by his own listed key in alice's name, unsigned, with a corrupted
 * signature, or signed by a key with alice's user id that the listing does not hold (and that alice's
 * own keyring trusts) reads tampered naming the step, and `lockstep verify` fails naming it.
 */
export function openpgpChainAttacks(
  driver: 'file' | 'sqlite' | 'redis' | 'etcd',
  store: (context: Mocha.Context) => Promise<AttackedStore>,
): void {
  describe(`OpenPGP (GPG) signatures on a signed lock history on the ${driver} driver`, function () {
    this.timeout(300_000);
    let team: FencingTeam;
    let alice: TeamMember, bob: TeamMember, ops: TeamMember;
    let gpgAlice: GpgPerson, gpgBob: GpgPerson, gpgMallory: GpgPerson;
    let key: string;
    let hand: StoreHand;
    let attacked: AttackedStore | undefined;
    let grantSeen = 0;

    const homeOf = (who: TeamMember): Record<string, string> =>
      who === alice ? { GNUPGHOME: gpgAlice.home } : who === bob ? { GNUPGHOME: gpgBob.home } : {};
    const as = (who: TeamMember, args: readonly string[]) => team.lockstep(who.dir, args, { env: homeOf(who) });
    const ok = (result: CliResult, what: string): any => {
      assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
      return result.json;
    };
    const settings = () => ({ leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] });

    async function chain(): Promise<{ steps: ChainStep[] }> {
      const read = readChain(await hand.top());
      assert.ok(read.ok, 'the store holds a signed chain');
      return read;
    }
    const lastRecord = (c: { steps: readonly ChainStep[] }) =>
      parseRecord(JSON.parse(c.steps[c.steps.length - 1].r), driver === 'sqlite' ? 'sql' : driver, team.container, settings());
    /** A step on top of the chain, its signature what `sign` makes of the step's bytes. */
    function forgeStep(
      c: { steps: readonly ChainStep[] },
      record: protocol.LockRecord,
      sign: (message: string) => string,
    ): { envelope: ChainEnvelope; step: string } {
      const r = encodeRecord(record);
      const p = digestOf(c.steps[c.steps.length - 1].r);
      return { envelope: storeChain([...c.steps, { p, r, s: sign(stepMessage(key, p, r)) }]), step: digestOf(r) };
    }
    /** The page reads tampered in `who`'s clone, naming `step`; no holder is shown. */
    async function tampered(who: TeamMember, step: string, why: RegExp, what: string): Promise<void> {
      const read = await as(who, ['status']);
      assert.equal(read.code, 5, `${what}: exit 5 in ${who.name}'s clone\n${read.stdout}${read.stderr}`);
      assert.equal(read.json.error.reason, 'tampered', `${what}: ${read.stdout}`);
      assert.equal(read.json.error.revision, step, `${what}: names the step`);
      assert.match(read.json.error.message, why, what);
      assert.doesNotMatch(read.stdout, /"holder"/, `${what}: no holder is read`);
    }
    /** `lockstep verify --push` in a fresh CI clone (no witness: it proves the window from its start). */
    async function verifyInCi(): Promise<CliResult> {
      const dir = path.join(team.root, `ci-${randomBytes(3).toString('hex')}`);
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, dir);
      const tip = team.remoteSha();
      return team.lockstep(dir, ['verify', '--push', `${tip}..${tip}`, '--branch', 'main']);
    }

    before(async function () {
      attacked = await store(this);
      ({ team, key, hand } = await teamOnAttackedStore(attacked));
      [alice, bob, ops] = team.members;
      ({ gpgAlice, gpgBob, gpgMallory } = await gpgSigningTeam(team, ops, alice, bob));
      // The page init wrote before signing was on is unsigned: the operator's SSH-signed adopt starts its chain.
      grantSeen = (await hand.top()).grant;
      ok(await as(ops, ['adopt', '--reason', 'signing turned on', '--grant', String(grantSeen), '--next-id', '1000']), 'ops adopts');
      ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'install the server guard');
    });
    after(async () => {
      stopAgents([gpgAlice, gpgBob, gpgMallory].filter(p => p !== undefined).map(p => p.home));
      team?.dispose();
      await attacked?.dispose?.();
    });

    it("alice's GPG key signs her acquire: proven in bob's clone, a fresh clone, the guard's repository and lockstep verify; she lands", async () => {
      grantSeen = ok(await as(alice, ['acquire']), 'alice acquires, GPG-signed').grant;
      const c = await chain();
      assert.match(c.steps[c.steps.length - 1].s, /^-----BEGIN PGP SIGNATURE-----/, "the step carries alice's OpenPGP signature");
      assert.match(c.steps[0].s, /^-----BEGIN SSH SIGNATURE-----/, "the operator's adopt is SSH-signed");
      assert.equal(ok(await as(bob, ['status']), 'bob reads').holder.identity, alice.identity);
      const fresh: TeamMember = { name: 'carol', identity: 'carol@example.com', dir: path.join(team.root, 'carol') };
      await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, fresh.dir);
      await team.gitOk(fresh.dir, 'config', 'user.email', fresh.identity);
      assert.equal(ok(await as(fresh, ['status']), 'a fresh clone proves the window').holder.identity, alice.identity);
      assert.equal(
        ok(await team.lockstep(team.remote, ['status']), 'the shared bare repository proves it as the guard does').holder.identity,
        alice.identity,
      );
      const checked = await verifyInCi();
      assert.equal(checked.code, 0, `${checked.stdout}${checked.stderr}`);
      // Through the server guard (which proves the page with the pinned listing) under her grant.
      await team.gitOk(alice.dir, 'pull', '--quiet', '--no-rebase', 'origin', 'main');
      await team.commit(alice, `alice-${randomBytes(3).toString('hex')}.txt`);
      const landed = await team.git(alice.dir, ['push', '--no-verify', 'origin', 'HEAD:main'], { printsSecrets: true });
      assert.equal(landed.code, 0, `alice lands through the guard: ${landed.stderr}`);
    });

    it('a step bob writes into the store signed by his own GPG key in her name, unsigned, corrupted, or by an unlisted key: tampered, naming it', async () => {
      const c = await chain();
      const record = lastRecord(c);
      const h = record.holder!;
      const released = protocol.release(record, { identity: h.identity, tokenHash: h.tokenHash, grant: h.grant }, Date.now(), {});
      assert.ok(released.ok && released.record);
      // A key with alice's user id that alice's own keyring trusts ultimately: never believed, the reader's keyring is not read.
      trustInHome(gpgAlice.home, exportKey(gpgMallory), gpgMallory.fingerprint);
      const corrupt = (signature: string) => {
        const lines = signature.split('\n');
        const body = lines.findIndex((l, i) => i > 0 && l.length > 40);
        const at = Math.floor(lines[body].length / 2);
        lines[body] = lines[body].slice(0, at) + (lines[body][at] === 'A' ? 'B' : 'A') + lines[body].slice(at + 1);
        return lines.join('\n');
      };
      for (const [what, forgery, why] of [
        [
          "bob's listed GPG key signs alice's release",
          forgeStep(c, released.record, m => gpgSign(gpgBob, m)),
          /OpenPGP key openpgpSigners gives bob@example\.com, but its audit line acts as alice@example\.com/,
        ],
        ['unsigned', forgeStep(c, released.record, () => ''), /not signed/],
        [
          "alice's signature corrupted",
          forgeStep(c, released.record, m => corrupt(gpgSign(gpgAlice, m))),
          /OpenPGP signature does not verify against a key openpgpSigners lists/,
        ],
        [
          "an unlisted key with alice's user id",
          forgeStep(c, released.record, m => gpgSign(gpgMallory, m)),
          /OpenPGP signature does not verify against a key openpgpSigners lists/,
        ],
      ] as const) {
        const undo = await hand.writeTop(forgery.envelope);
        await tampered(alice, forgery.step, why, what);
        await tampered(bob, forgery.step, why, `${what}, in bob's clone`);
        const check = await verifyInCi();
        assert.equal(check.code, 5, `${what}: the check reads a tampered page: ${check.stdout}${check.stderr}`);
        assert.equal(check.json.error.reason, 'tampered', what);
        assert.equal(check.json.error.revision, forgery.step, `${what}: the check names the step`);
        await undo();
      }
      // Control: the page as alice left it reads again, and her GPG-signed release frees it everywhere.
      assert.equal(ok(await as(bob, ['status']), 'the page reads again').holder.identity, alice.identity);
      ok(await as(alice, ['release']), 'alice releases, GPG-signed');
      for (const who of [alice, bob]) assert.equal(ok(await as(who, ['status']), `${who.name} reads the release`).holder, null);
      assert.equal((await verifyInCi()).code, 0, 'the check proves the page');
    });
  });
}
