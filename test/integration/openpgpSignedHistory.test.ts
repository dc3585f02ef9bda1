import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as protocol from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { encodeRecord, parseRecord } from '../../src/core/recordCodec';
import { stampEnv, stampOf, transitionSubject } from '../../src/core/stores/git/recordCommit';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import {
  exportKey,
  type GpgPerson,
  gpgSigningTeam,
  keyExpiry,
  landOpenpgpListing,
  makeGpgPerson,
  OPENPGP_KEYS_PATH,
  setExpiry,
  signWithGpg,
  stopAgents,
  trustInHome,
} from '../helpers/teamOpenpgp';
import { SIGNING_TEAM, signWithSshKeys } from '../helpers/teamSigning';

/**
 * A signed lock page on the git driver whose people sign with GPG (`openpgpSigners` and `openpgpKeys`
 * beside `allowedSigners`, docs/protocol.md "OpenPGP (GPG) signatures"). Keys are real ed25519 keys
 * made by gpg in a throwaway GNUPGHOME per person; the operator signs with SSH, so one page mixes both
 * kinds. Every reader — a clone's status, status --remote, lockstep verify in a fresh CI clone, and the
 * server guard reached through `git daemon` — proves alice's GPG-signed steps and reads a step that
 * bob's listed key signs in alice's name, or that a key with alice's user id which the reader's own
 * keyring trusts signs, as tampered, naming the commit. A key that has expired proves no step, whenever
 * it signed (the chain does not refuse a step dated before the one it follows, so an expired key's
 * good signature is never accepted).
 */

describe('OpenPGP (GPG) signatures on a signed lock page (git driver)', function () {
  this.timeout(300_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember, ops: TeamMember;
  let recordRef: string;
  let gpgAlice: GpgPerson, gpgBob: GpgPerson, gpgMallory: GpgPerson;
  let grantSeen = 0;

  const homeOf = (who: TeamMember): Record<string, string> =>
    who === alice ? { GNUPGHOME: gpgAlice.home } : who === bob ? { GNUPGHOME: gpgBob.home } : {};
  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const as = (who: TeamMember, args: readonly string[], env: Record<string, string> = homeOf(who)) => team.lockstep(who.dir, args, { env });
  const settings = () => ({ leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [ops.identity] });

  async function remoteRecord(who: TeamMember): Promise<{ tip: string; record: protocol.LockRecord }> {
    await team.gitOk(who.dir, 'fetch', '--quiet', 'origin', `+${recordRef}:refs/forge/tip`);
    const tip = await team.gitOk(who.dir, 'rev-parse', 'refs/forge/tip');
    const text = await team.gitOk(who.dir, 'cat-file', 'blob', `${tip}:record.json`);
    return { tip, record: parseRecord(JSON.parse(text), 'git', team.container, settings()) };
  }
  /** A record commit exactly as a lockstep client writes it, signed by `person`'s GPG key. */
  async function forgeSigned(who: TeamMember, record: protocol.LockRecord, parent: string, person: GpgPerson): Promise<string> {
    const text = encodeRecord(record);
    const line = record.audit[record.audit.length - 1];
    const blob = (await team.git(who.dir, ['hash-object', '-w', '--stdin'], { input: text })).stdout.trim();
    const tree = (await team.git(who.dir, ['mktree'], { input: `100644 blob ${blob}\trecord.json\n` })).stdout.trim();
    const commit = await team.git(
      who.dir,
      ['-c', 'gpg.format=openpgp', '-c', `user.signingkey=${person.fingerprint}`, 'commit-tree', '-S', tree, '-p', parent],
      {
        input: `${transitionSubject(line)}\n\nLockstep-Write: ${randomBytes(8).toString('hex')}\n`,
        env: { ...stampEnv(stampOf(line)), GNUPGHOME: person.home },
      },
    );
    assert.equal(commit.code, 0, commit.stderr);
    return commit.stdout.trim();
  }
  const petitionAs = (record: protocol.LockRecord, identity: string) => protocol.petition(record, { identity }, Date.now()).record!;
  async function tampered(read: CliResult, commit: string, why: RegExp, what: string): Promise<void> {
    assert.equal(read.code, 5, `${what}: exit 5\n${read.stdout}${read.stderr}`);
    assert.equal(read.json.error.reason, 'tampered', `${what}: ${read.stdout}`);
    assert.equal(read.json.error.revision, commit, `${what}: names the commit`);
    assert.match(read.json.error.message, why, what);
    assert.doesNotMatch(read.stdout, /"holder"/, `${what}: no holder is read`);
  }
  async function opsAdopts(reason: string): Promise<void> {
    ok(await as(ops, ['adopt', '--reason', reason, '--grant', String(grantSeen), '--next-id', '1000']), 'ops adopts (SSH-signed)');
    for (const who of [alice, bob, ops]) assert.equal(ok(await as(who, ['status']), `${who.name} reads the adopted page`).holder, null);
  }
  /** `lockstep verify` in a fresh CI clone (no witness: it proves the page from its start) over a new landing by ops. */
  async function verifyInCi(name: string): Promise<CliResult> {
    const from = await team.gitOk(ops.dir, 'rev-parse', 'HEAD');
    fs.writeFileSync(path.join(ops.dir, `notes-${name}.txt`), 'a note\n');
    await team.gitOk(ops.dir, 'add', `notes-${name}.txt`);
    await team.gitOk(ops.dir, 'commit', '--quiet', '-m', 'a note');
    await team.gitOk(ops.dir, 'push', '--quiet', '--no-verify', 'origin', 'HEAD:main');
    const to = await team.gitOk(ops.dir, 'rev-parse', 'HEAD');
    const ci = path.join(team.root, `ci-${name}`);
    await team.gitOk(team.root, 'clone', '--quiet', team.remoteUrl, ci);
    return team.lockstep(ci, ['verify', '--push', `${from}..${to}`, '--branch', 'main']);
  }

  before(async () => {
    team = await createFencingTeam({
      ...SIGNING_TEAM,
      driver: 'git',
    });
    [alice, bob, ops] = team.members;
    await team.gitOk(team.remote, 'config', 'receive.advertisePushOptions', 'true');
    recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    ({ gpgAlice, gpgBob, gpgMallory } = await gpgSigningTeam(team, ops, alice, bob));
    // The page init wrote before signing was on is unsigned: the operator's signed adopt restarts it.
    await opsAdopts('signing turned on');
  });
  after(() => {
    stopAgents([gpgAlice, gpgBob, gpgMallory].filter(p => p !== undefined).map(p => p.home));
    team?.dispose();
  });

  it("alice's listed GPG key signs her acquire: proven in bob's clone, without a clone, and by lockstep verify in a fresh CI clone", async () => {
    grantSeen = ok(await as(alice, ['acquire']), 'alice acquires, GPG-signed').grant;
    const sig = await team.gitOk(alice.dir, 'cat-file', '-p', (await remoteRecord(alice)).tip);
    assert.match(sig, /BEGIN PGP SIGNATURE/, "the step is signed with alice's GPG key");
    assert.equal(ok(await as(bob, ['status']), 'bob reads').holder.identity, alice.identity);
    const remote = ok(await team.lockstep(team.root, ['status', '--remote', team.remoteUrl]), 'status --remote proves the page');
    assert.equal(remote.holder.identity, alice.identity);
    const verdict = await verifyInCi('proven');
    assert.equal(verdict.json.identities, 'proven', `${verdict.stdout}${verdict.stderr}`);
    ok(await as(alice, ['release']), 'alice releases, GPG-signed');
  });

  it("bob's listed GPG key signs a step in alice's name: tampered in every reader, naming the commit", async () => {
    const { tip, record } = await remoteRecord(bob);
    const forged = await forgeSigned(bob, petitionAs(record, alice.identity), tip, gpgBob);
    ok(await team.git(bob.dir, ['push', '--quiet', '--no-verify', '--force', 'origin', `${forged}:${recordRef}`]), 'bob pushes');
    const why = /OpenPGP key openpgpSigners gives bob@example\.com, but its audit line acts as alice@example\.com/;
    await tampered(await as(ops, ['status']), forged, why, "ops's clone");
    await tampered(await team.lockstep(team.root, ['status', '--remote', team.remoteUrl]), forged, why, 'status --remote');
    await tampered(await verifyInCi('bob-for-alice'), forged, why, 'lockstep verify');
    await opsAdopts('bob signed for alice');
  });

  it("a key with alice's user id that is not listed, trusted in the reader's own keyring: tampered", async () => {
    const readerHome = path.join(team.root, 'gnupg-reader');
    fs.mkdirSync(readerHome, { mode: 0o700 });
    trustInHome(readerHome, exportKey(gpgMallory), gpgMallory.fingerprint);
    const { tip, record } = await remoteRecord(bob);
    const forged = await forgeSigned(bob, petitionAs(record, alice.identity), tip, gpgMallory);
    ok(await team.git(bob.dir, ['push', '--quiet', '--no-verify', '--force', 'origin', `${forged}:${recordRef}`]), 'the forgery is pushed');
    // The reader's own keyring (GNUPGHOME) trusts mallory's key, whose user id is alice's; it is never asked.
    await tampered(await as(ops, ['status'], { GNUPGHOME: readerHome }), forged, /does not verify/, "ops's clone, keyring trusting it");
    await tampered(await as(alice, ['status'], { GNUPGHOME: readerHome }), forged, /does not verify/, "alice's clone");
    stopAgents([readerHome]);
    await opsAdopts("a key with alice's user id");
  });

  it('with the server guard installed (through git daemon): alice passes, bob signing for alice is refused at the door', async () => {
    ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'install the server guard (it pins the OpenPGP listing)');
    const { tip, record } = await remoteRecord(bob);
    const refused = await team.git(bob.dir, [
      'push',
      '--no-verify',
      'origin',
      `${await forgeSigned(bob, petitionAs(record, alice.identity), tip, gpgBob)}:${recordRef}`,
    ]);
    assert.notEqual(refused.code, 0, refused.stderr);
    assert.match(refused.stderr, /pre-receive hook declined/);
    assert.match(refused.stderr, /OpenPGP key openpgpSigners gives bob@example\.com, but its audit line acts as alice@example\.com/);
    assert.equal((await remoteRecord(bob)).tip, tip, 'the lock ref did not move');
    grantSeen = ok(await as(alice, ['acquire']), 'alice acquires, GPG-signed, through the guard').grant;
    ok(await as(bob, ['petition']), 'bob petitions, GPG-signed, through the guard');
    ok(await as(alice, ['release']), 'alice releases, GPG-signed, through the guard');
    assert.equal(ok(await as(ops, ['status']), 'ops reads').holder, null);
  });

  it('a clone whose git signs with x509 (gpgsm): doctor counts no usable key, and a write is refused before anything is signed', async () => {
    const tip = (await remoteRecord(bob)).tip;
    await team.gitOk(bob.dir, 'config', 'gpg.format', 'x509');
    try {
      const doctor = (await as(bob, ['doctor'])).json;
      const signing = doctor.findings.find((f: { check: string }) => f.check === 'signing');
      assert.match(signing.found, /git has no SSH or GPG signing key in this clone: every write is refused/, JSON.stringify(signing));
      const refused = await as(bob, ['withdraw']);
      assert.equal(refused.code, 2, `${refused.stdout}${refused.stderr}`);
      assert.match(`${refused.stdout}${refused.stderr}`, /no SSH or OpenPGP signing key/);
      assert.equal((await remoteRecord(bob)).tip, tip, 'nothing was written');
    } finally {
      await team.gitOk(bob.dir, 'config', '--unset', 'gpg.format');
    }
    ok(await as(bob, ['withdraw']), 'with its OpenPGP key again, bob withdraws from the queue');
  });
});

describe('OpenPGP (GPG) signatures: a key that has expired proves no step', function () {
  this.timeout(300_000);
  let team: FencingTeam;
  let alice: TeamMember, ops: TeamMember;
  let gpgAlice: GpgPerson;

  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const relandKeys = async () => {
    fs.writeFileSync(path.join(ops.dir, OPENPGP_KEYS_PATH), exportKey(gpgAlice));
    await team.gitOk(ops.dir, 'commit', '--quiet', '-am', "alice's key, its expiry changed");
    await team.gitOk(ops.dir, 'push', '--quiet', '--no-verify', 'origin', 'HEAD:main');
  };
  const remoteStatus = () => team.lockstep(team.root, ['status', '--remote', team.remoteUrl]);

  before(async () => {
    team = await createFencingTeam({
      members: ['alice', 'ops'],
      operators: ['ops@example.com'],
      driver: 'git',
      serverHooks: false,
      clientHooks: false,
    });
    [alice, ops] = team.members;
    await signWithSshKeys(team, [ops], ops, [alice]);
    gpgAlice = makeGpgPerson(team.root, 'alice', alice.identity);
    await signWithGpg(team, alice, gpgAlice);
    await landOpenpgpListing(team, ops, [alice], [{ identity: alice.identity, person: gpgAlice }]);
    ok(await team.lockstep(ops.dir, ['adopt', '--reason', 'signing turned on', '--grant', '0', '--next-id', '1']), 'ops adopts');
  });
  after(() => {
    if (gpgAlice !== undefined) stopAgents([gpgAlice.home]);
    team?.dispose();
  });

  it("alice's steps signed while her key was valid read tampered once it has expired, and proven again when she extends it", async () => {
    const env = { GNUPGHOME: gpgAlice.home };
    ok(await team.lockstep(alice.dir, ['acquire'], { env }), 'alice acquires with a key that never expires');
    const recordRef = `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${team.container}`)}`;
    const signed = (await team.gitOk(alice.dir, 'ls-remote', 'origin', recordRef)).split(/\s/)[0];
    assert.equal(ok(await remoteStatus(), 'proven while the key is valid').holder.identity, alice.identity);
    // The key now expires in two seconds; its export with that expiry lands on main.
    setExpiry(gpgAlice, 'seconds=2');
    await relandKeys();
    const expiry = keyExpiry(gpgAlice);
    assert.ok(expiry !== undefined);
    const deadline = Date.now() + 30_000;
    while (Date.now() <= expiry + 1000) {
      assert.ok(Date.now() < deadline, 'the key expires within the deadline');
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    const read = await remoteStatus();
    assert.equal(read.code, 5, `a reader without a witness reads tampered: ${read.stdout}${read.stderr}`);
    assert.equal(read.json.error.reason, 'tampered');
    assert.equal(read.json.error.revision, signed, "names alice's step");
    assert.match(read.json.error.message, /expired/);
    // Extending the key's expiry (and landing its export) makes the same signature good again.
    setExpiry(gpgAlice, 'never');
    await relandKeys();
    assert.equal(ok(await remoteStatus(), 'proven again').holder.identity, alice.identity);
  });

  it('an openpgpKeys file larger than 1 MiB is a configuration error (exit 2) in every reader, never read', async () => {
    fs.appendFileSync(path.join(ops.dir, OPENPGP_KEYS_PATH), `${'#'.repeat(1024 * 1024)}\n`);
    await team.gitOk(ops.dir, 'commit', '--quiet', '-am', 'an oversized key file');
    await team.gitOk(ops.dir, 'push', '--quiet', '--no-verify', 'origin', 'HEAD:main');
    for (const [reader, read] of [
      ["ops's clone (alice's acquire is a step it has not proven yet)", () => team.lockstep(ops.dir, ['status'])],
      ['status --remote', remoteStatus],
    ] as const) {
      const result = await read();
      assert.equal(result.code, 2, `${reader}: exit 2\n${result.stdout}${result.stderr}`);
      assert.match(result.json.error.message, /openpgpKeys|larger than 1024 KiB/, `${reader}: ${result.json.error.message}`);
    }
  });
});
