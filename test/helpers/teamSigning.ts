import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FencingTeam, FencingTeamOptions, TeamMember } from './fencingFixture';

/**
 * The signing tests' team: alice, bob and ops (the operator), reaching the remote through git daemon, with no
 * hooks (each test installs what it attacks or relies on).
 */
export const SIGNING_TEAM = {
  members: ['alice', 'bob', 'ops'],
  operators: ['ops@example.com'],
  transport: 'daemon',
  serverHooks: false,
  clientHooks: false,
} as const satisfies Partial<FencingTeamOptions>;

/** Where the tests keep the allowed signers list in the repository. */
export const SIGNERS_PATH = '.lockstep/allowed_signers';

/**
 * Turns signing on for a fencing team as a real team would: each of `signers` gets a fresh ed25519
 * key (ssh-keygen) that git signs with (`gpg.format ssh`, `user.signingkey`, the way a developer
 * configures git for GitHub); then `operator` lands the allowed signers list and `allowedSigners` in
 * `.lockstep.json` on main, and `pullers` pull it. Returns each signer's private key file by name.
 */
export async function signWithSshKeys(
  team: FencingTeam,
  signers: readonly TeamMember[],
  operator: TeamMember,
  pullers: readonly TeamMember[],
): Promise<Record<string, string>> {
  const keyDir = path.join(team.root, 'keys');
  fs.mkdirSync(keyDir);
  const keys: Record<string, string> = {};
  const listed: string[] = [];
  for (const who of signers) {
    keys[who.name] = path.join(keyDir, who.name);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', who.name, '-f', keys[who.name]]);
    listed.push(`${who.identity} ${fs.readFileSync(`${keys[who.name]}.pub`, 'utf8').trim()}`);
    await team.gitOk(who.dir, 'config', 'gpg.format', 'ssh');
    await team.gitOk(who.dir, 'config', 'user.signingkey', keys[who.name]);
  }
  fs.mkdirSync(path.join(operator.dir, '.lockstep'));
  fs.writeFileSync(path.join(operator.dir, SIGNERS_PATH), `${listed.join('\n')}\n`);
  const file = JSON.parse(fs.readFileSync(path.join(operator.dir, '.lockstep.json'), 'utf8'));
  fs.writeFileSync(path.join(operator.dir, '.lockstep.json'), `${JSON.stringify({ ...file, allowedSigners: SIGNERS_PATH }, null, 2)}\n`);
  await team.gitOk(operator.dir, 'add', '.lockstep.json', SIGNERS_PATH);
  await team.gitOk(operator.dir, 'commit', '--quiet', '-m', 'sign the lock page');
  await team.gitOk(operator.dir, 'push', '--quiet', 'origin', 'HEAD:main');
  for (const who of pullers) await team.gitOk(who.dir, 'pull', '--quiet', 'origin', 'main');
  return keys;
}
