import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FencingTeam, TeamMember } from './fencingFixture';
import { signWithSshKeys } from './teamSigning';

/** Where the tests keep the OpenPGP listing in the repository. */
export const OPENPGP_SIGNERS_PATH = '.lockstep/openpgp_signers';
export const OPENPGP_KEYS_PATH = '.lockstep/openpgp_keys.asc';

/** A throwaway GnuPG home of one person, with one ed25519 signing key for `userId`. */
export interface GpgPerson {
  readonly home: string;
  readonly fingerprint: string;
}

const gpg = (home: string, args: readonly string[], input?: string): string =>
  execFileSync('gpg', ['--batch', '--no-tty', '--passphrase', '', '--pinentry-mode', 'loopback', ...args], {
    env: { ...process.env, GNUPGHOME: home },
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  }).toString('utf8');

/** Makes a GnuPG home under `root` with a fresh key (`gpg --quick-gen-key USERID ed25519 sign never`). */
export function makeGpgPerson(root: string, name: string, userId: string): GpgPerson {
  const home = path.join(root, `gnupg-${name}`);
  fs.mkdirSync(home, { mode: 0o700 });
  gpg(home, ['--quick-gen-key', userId, 'ed25519', 'sign', 'never']);
  return { home, fingerprint: primaryFingerprints(home)[0] };
}

/** The primary key fingerprints of a home's public keyring. */
export function primaryFingerprints(home: string): string[] {
  const lines = gpg(home, ['--with-colons', '--fixed-list-mode', '--list-keys']).split('\n');
  const out: string[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.startsWith('pub:')) out.push(lines[i + 1].split(':')[9]);
  }
  return out;
}

/** When the key expires (ms since the epoch), or undefined when it never does. */
export function keyExpiry(person: GpgPerson): number | undefined {
  const pub = gpg(person.home, ['--with-colons', '--fixed-list-mode', '--list-keys', person.fingerprint])
    .split('\n')
    .find(l => l.startsWith('pub:'));
  const field = pub?.split(':')[6] ?? '';
  return field === '' ? undefined : Number(field) * 1000;
}

/** `gpg --quick-set-expire FPR WHEN` (`seconds=N`, `never`). */
export function setExpiry(person: GpgPerson, when: string): void {
  gpg(person.home, ['--quick-set-expire', person.fingerprint, when]);
}

/** `person`'s armored public key. */
export function exportKey(person: GpgPerson): string {
  return gpg(person.home, ['--armor', '--export', person.fingerprint]);
}

/** Imports `armored` into `home` and trusts it ultimately (a reader's own keyring that believes a key). */
export function trustInHome(home: string, armored: string, fingerprint: string): void {
  gpg(home, ['--import'], armored);
  gpg(home, ['--import-ownertrust'], `${fingerprint}:6:\n`);
}

/** git in `who`'s clone signs with `person`'s key (`gpg.format openpgp`, `user.signingkey FPR`). */
export async function signWithGpg(team: FencingTeam, who: TeamMember, person: GpgPerson): Promise<void> {
  await team.gitOk(who.dir, 'config', 'gpg.format', 'openpgp');
  await team.gitOk(who.dir, 'config', 'user.signingkey', person.fingerprint);
}

/**
 * `operator` lands the OpenPGP listing on main (the signers file, the armored keys, and openpgpSigners /
 * openpgpKeys in `.lockstep.json`); `pullers` pull it.
 */
export async function landOpenpgpListing(
  team: FencingTeam,
  operator: TeamMember,
  pullers: readonly TeamMember[],
  listed: readonly { identity: string; person: GpgPerson }[],
): Promise<void> {
  fs.mkdirSync(path.join(operator.dir, '.lockstep'), { recursive: true });
  fs.writeFileSync(path.join(operator.dir, OPENPGP_SIGNERS_PATH), listed.map(l => `${l.identity} ${l.person.fingerprint}\n`).join(''));
  fs.writeFileSync(path.join(operator.dir, OPENPGP_KEYS_PATH), listed.map(l => exportKey(l.person)).join(''));
  const file = JSON.parse(fs.readFileSync(path.join(operator.dir, '.lockstep.json'), 'utf8'));
  fs.writeFileSync(
    path.join(operator.dir, '.lockstep.json'),
    `${JSON.stringify({ ...file, openpgpSigners: OPENPGP_SIGNERS_PATH, openpgpKeys: OPENPGP_KEYS_PATH }, null, 2)}\n`,
  );
  await team.gitOk(operator.dir, 'add', '.lockstep.json', OPENPGP_SIGNERS_PATH, OPENPGP_KEYS_PATH);
  await team.gitOk(operator.dir, 'commit', '--quiet', '-m', 'list OpenPGP signers');
  await team.gitOk(operator.dir, 'push', '--quiet', '--no-verify', 'origin', 'HEAD:main');
  for (const who of pullers) await team.gitOk(who.dir, 'pull', '--quiet', 'origin', 'main');
}

/** Stops the agents gpg started in each home (`gpgconf --kill all`). */
export function stopAgents(homes: readonly string[]): void {
  for (const home of homes) {
    try {
      execFileSync('gpgconf', ['--kill', 'all'], { env: { ...process.env, GNUPGHOME: home }, stdio: 'ignore' });
    } catch {
      // a home whose agent never ran
    }
  }
}

/** `person`'s armored detached signature of `message` (`gpg --armor --detach-sign`), as a signer's gpg makes one. */
export function gpgSign(person: GpgPerson, message: string): string {
  return gpg(person.home, ['--armor', '--detach-sign', '--local-user', person.fingerprint], message);
}

/** The GPG keys of a mixed signing team (gpgSigningTeam): alice's, bob's, and mallory's, whose user id is alice's. */
export interface GpgTeamKeys {
  readonly gpgAlice: GpgPerson;
  readonly gpgBob: GpgPerson;
  readonly gpgMallory: GpgPerson;
}

/**
 * One chain, both kinds of signature: `ops` signs with SSH (the allowed signers file lists only ops), alice and
 * bob with GPG (each a fresh key, listed in openpgpSigners by ops); mallory has a key of her own that claims
 * alice's user id and is listed nowhere.
 */
export async function gpgSigningTeam(team: FencingTeam, ops: TeamMember, alice: TeamMember, bob: TeamMember): Promise<GpgTeamKeys> {
  await signWithSshKeys(team, [ops], ops, [alice, bob]);
  const keys = {
    gpgAlice: makeGpgPerson(team.root, 'alice', alice.identity),
    gpgBob: makeGpgPerson(team.root, 'bob', bob.identity),
    gpgMallory: makeGpgPerson(team.root, 'mallory', alice.identity),
  };
  await signWithGpg(team, alice, keys.gpgAlice);
  await signWithGpg(team, bob, keys.gpgBob);
  await landOpenpgpListing(
    team,
    ops,
    [alice, bob],
    [
      { identity: alice.identity, person: keys.gpgAlice },
      { identity: bob.identity, person: keys.gpgBob },
    ],
  );
  return keys;
}
