import type { GitCommand } from './runner';

/**
 * What git would sign a commit with here: whether a signing key is configured (`user.signingkey`, or
 * for SSH `gpg.ssh.defaultKeyCommand`) and whether the format is SSH (`gpg.format=ssh`), the one
 * format a signed lock page checks against its allowed signers list. One `git config` process;
 * nothing of the key is read or printed.
 */
export interface SigningSetup {
  readonly key: boolean;
  readonly ssh: boolean;
}

export async function signingSetup(git: Pick<GitCommand, 'run'>): Promise<SigningSetup> {
  const output = await git.run(['config', '--get-regexp', '^(user\\.signingkey|gpg\\.ssh\\.defaultkeycommand|gpg\\.format)$']);
  if (output.code !== 0) return { key: false, ssh: false };
  const names = new Map<string, string>();
  for (const line of output.stdout.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) names.set(line.slice(0, space).toLowerCase(), line.slice(space + 1).trim());
  }
  const ssh = names.get('gpg.format')?.toLowerCase() === 'ssh';
  return { key: (names.get('user.signingkey') ?? '') !== '' || (ssh && (names.get('gpg.ssh.defaultkeycommand') ?? '') !== ''), ssh };
}
