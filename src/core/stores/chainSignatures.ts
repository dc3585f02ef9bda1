import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockBackendError, LockConfigurationError } from '../errors';
import { gitIn } from '../git/runner';
import { STEP_NAMESPACE } from '../chain/signedChain';
import type { StepSignature } from '../chain/signedStep';
import { lastSetting, readCloneSettings } from '../git/cloneSettings';
import { signOpenpgp } from './openpgpStepSignatures';
import { runSigner, type SignerRan } from './signerProcess';

/**
 * The signatures of a signed chain's steps (signedChain.ts), made and checked by OpenSSH's own
 * `ssh-keygen -Y sign` / `-Y verify` with the key git signs commits with (`gpg.format=ssh`,
 * `user.signingkey`): the key a developer already uses for GitHub. Messages go through standard
 * input and temporary files private to this process; nothing of a key is printed. Where the
 * container lists openpgpSigners, a clone whose git signs with GPG signs its steps with gpg instead
 * (openpgpStepSignatures.ts).
 */

type Ran = SignerRan;

function run(args: readonly string[], input: string): Promise<Ran> {
  return runSigner('ssh-keygen', args, input);
}

/**
 * The key git signs with in a clone, and the program git signs with: an SSH key file for ssh-keygen,
 * or (where the container lists openpgpSigners) an OpenPGP key for gpg.
 */
export type StepSigner =
  | { readonly kind: 'ssh'; readonly keyFile: string; readonly program: string }
  | { readonly kind: 'openpgp'; readonly key: string; readonly program: string };

/** The signing settings read with the clone's others, in one git run (readCloneSettings: -z, so a value may hold spaces). */
const SIGNING_KEYS = ['gpg\\.(format|program|ssh\\.program|openpgp\\.program)', 'user\\.signingkey'];

/**
 * The key git signs with in `gitDir`, as git chooses it: `gpg.format=ssh` an SSH key file;
 * `gpg.format=openpgp` (or unset) with a `user.signingkey` an OpenPGP key, where `openpgp` (the
 * container lists openpgpSigners). A configuration error when neither is set up. The program is
 * git's too: `gpg.ssh.program` (else ssh-keygen), `gpg.openpgp.program` or `gpg.program` (else gpg).
 */
export async function stepSigner(gitDir: string, openpgp: boolean): Promise<StepSigner> {
  const listed = await readCloneSettings(gitIn(gitDir), SIGNING_KEYS);
  const setting = (key: string) => lastSetting(listed, key)?.trim() ?? '';
  const format = setting('gpg.format').toLowerCase();
  const key = setting('user.signingkey');
  if (format === 'ssh' && key !== '' && !key.startsWith('key::')) {
    return {
      kind: 'ssh',
      keyFile: key.startsWith('~/') ? path.join(os.homedir(), key.slice(2)) : key,
      program: setting('gpg.ssh.program') || 'ssh-keygen',
    };
  }
  if (openpgp && (format === '' || format === 'openpgp') && key !== '') {
    return { kind: 'openpgp', key, program: setting('gpg.openpgp.program') || setting('gpg.program') || 'gpg' };
  }
  throw new LockConfigurationError(
    `This lock page is signed (allowedSigners in .lockstep.json), and this clone has no ${openpgp ? 'SSH or OpenPGP' : 'SSH'} signing key set up for git.` +
      ' Set one: git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub' +
      (openpgp
        ? '; or GPG: git config gpg.format openpgp; git config user.signingkey FINGERPRINT (listed for your identity in openpgpSigners)'
        : ' (a GPG key signs only where the container lists openpgpSigners and openpgpKeys)') +
      '. lockstep doctor shows how.',
    { setting: 'user.signingkey' },
  );
}

/** The signature of a step's `message` by `signer`: ssh-keygen's or gpg's, armored. */
export function signStep(signer: StepSigner, message: string): Promise<string> {
  return signer.kind === 'ssh' ? signMessage(signer.keyFile, message, signer.program) : signOpenpgp(signer.key, message, signer.program);
}

/**
 * The armored signature of `message` by the key at `keyFile` (a private key, or a public one whose
 * private half ssh-agent holds), made by `program` (git's `gpg.ssh.program`, else ssh-keygen).
 */
export async function signMessage(keyFile: string, message: string, program = 'ssh-keygen'): Promise<string> {
  let ran: Ran;
  try {
    ran = await runSigner(program, ['-q', '-Y', 'sign', '-f', keyFile, '-n', STEP_NAMESPACE], message);
  } catch (cause) {
    throw new LockConfigurationError('ssh-keygen could not be started to sign a step of the lock page; install OpenSSH 8.2 or later.', {
      setting: 'user.signingkey',
      cause,
    });
  }
  if (ran.code !== 0 || !ran.stdout.includes('BEGIN SSH SIGNATURE')) {
    throw new LockConfigurationError(
      'ssh-keygen could not sign a step of the lock page with the key user.signingkey names; check that the key exists and is unlocked (ssh-agent).',
      { setting: 'user.signingkey' },
    );
  }
  return ran.stdout;
}

/**
 * What the allowed signers (a file's path) say of `signature` over `message`: N when there is none,
 * G with the principal whose key made it, B when no listed key did (or it covers other bytes).
 * `expected` (the step's actor) is tried first: one ssh-keygen for an honest step.
 */
export async function judgeSignature(
  signersFile: string,
  message: string,
  signature: string,
  expected: string,
  driver: string,
): Promise<StepSignature> {
  if (signature === '') return { status: 'N', signer: '' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-step-'));
  try {
    const sigFile = path.join(dir, 'step.sig');
    fs.writeFileSync(sigFile, signature, { mode: 0o600 });
    const verify = async (principal: string) =>
      (await run(['-Y', 'verify', '-f', signersFile, '-I', principal, '-n', STEP_NAMESPACE, '-s', sigFile], message)).code === 0;
    if (expected !== '' && (await verify(expected))) return { status: 'G', signer: expected };
    const found = await run(['-Y', 'find-principals', '-f', signersFile, '-s', sigFile], '');
    for (const principal of found.code === 0
      ? found.stdout
          .split('\n')
          .map(l => l.trim())
          .filter(Boolean)
      : []) {
      if (principal !== expected && (await verify(principal))) return { status: 'G', signer: principal };
    }
    return { status: 'B', signer: '' };
  } catch (cause) {
    throw new LockBackendError(driver, "ssh-keygen could not be run to check the lock page's signatures; install OpenSSH 8.2 or later.", {
      cause,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
