import type { GitCommand } from './runner';

/**
 * What git would sign a commit with here: whether a signing key is configured (`user.signingkey`, or
 * for SSH `gpg.ssh.defaultKeyCommand`) and in which format (`gpg.format`: `ssh`, `openpgp` — also
 * when unset — or `x509`). One `git config` process; nothing of the key is read or printed.
 */
export interface SigningSetup {
  readonly key: boolean;
  readonly format: 'ssh' | 'openpgp' | 'other';
}

export async function signingSetup(git: Pick<GitCommand, 'run'>): Promise<SigningSetup> {
  const output = await git.run(['config', '--get-regexp', '^(user\\.signingkey|gpg\\.ssh\\.defaultkeycommand|gpg\\.format)$']);
  if (output.code !== 0) return { key: false, format: 'openpgp' };
  const names = new Map<string, string>();
  for (const line of output.stdout.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) names.set(line.slice(0, space).toLowerCase(), line.slice(space + 1).trim());
  }
  const written = names.get('gpg.format')?.toLowerCase() ?? 'openpgp';
  const format = written === 'ssh' || written === 'openpgp' ? written : 'other';
  const key = (names.get('user.signingkey') ?? '') !== '' || (format === 'ssh' && (names.get('gpg.ssh.defaultkeycommand') ?? '') !== '');
  return { key, format };
}

/**
 * Whether that key signs a step a lock page checks: an SSH key always; an OpenPGP key only where the
 * container lists openpgpSigners; an x509 (gpgsm) key never — no reader checks it, so counting it
 * would promise signed steps that every reader then refuses.
 */
export function signsCheckedSteps(setup: SigningSetup, openpgpListed: boolean): boolean {
  return setup.key && (setup.format === 'ssh' || (setup.format === 'openpgp' && openpgpListed));
}
