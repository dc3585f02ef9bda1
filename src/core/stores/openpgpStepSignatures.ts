import * as fs from 'node:fs';
import * as path from 'node:path';
import { gpgVerifyFields, type OpenpgpSigners, stepSignature } from '../chain/openpgpSigners';
import type { StepSignature } from '../chain/signedStep';
import { LockBackendError, LockConfigurationError } from '../errors';
import { GPG_TIMEOUT_MS, runGpg } from './gpgProcess';

/**
 * The OpenPGP (GPG) signatures of a signed chain's steps (signedChain.ts) on the file, SQL, Redis and
 * etcd drivers, where the container lists `openpgpSigners` and `openpgpKeys`: made by the signer's own
 * gpg with the key git signs commits with (`gpg.format=openpgp`, `user.signingkey`), as git makes a
 * commit's (`gpg --status-fd=2 -bsau KEY`), over exactly the bytes an SSH signature covers
 * ({@link stepMessage}); checked by gpg in the reader's own private keyring, which holds only the listed
 * keys (signersFile.ts, openpgpKeyring.ts), and read by the same rule as a git commit's OpenPGP
 * signature (openpgpSigners.ts `stepSignature`, signedStep.ts). The reader's own keyring is never used.
 */

/** A detached armored OpenPGP signature: what marks a step's signature as gpg's, not ssh-keygen's. */
const ARMOR = '-----BEGIN PGP SIGNATURE-----';

/** The largest OpenPGP step signature written or checked (an RSA-4096 one is under 1 KiB armored). */
export const MAX_OPENPGP_SIGNATURE_BYTES = 8 * 1024;

/** How long the signer's gpg may take (its agent may ask for the key's passphrase). */
const SIGN_TIMEOUT_MS = 120_000;

export function isOpenpgpSignature(signature: string): boolean {
  return signature.startsWith(ARMOR);
}

/**
 * The armored detached signature of `message` by the OpenPGP key `key` (user.signingkey) of the
 * signer's own gpg: `program` (git's `gpg.openpgp.program` or `gpg.program`, else gpg).
 */
export async function signOpenpgp(key: string, message: string, program = 'gpg'): Promise<string> {
  const refused = (cause?: unknown) =>
    new LockConfigurationError(
      'gpg could not sign a step of the lock page with the OpenPGP key user.signingkey names; check that gpg has its secret key (gpg --list-secret-keys) and that its agent can unlock it.',
      { setting: 'user.signingkey', ...(cause === undefined ? {} : { cause }) },
    );
  const ran = await runGpg(['--status-fd=2', '-bsau', key], message, { interactive: true, timeoutMs: SIGN_TIMEOUT_MS, program }).catch(
    cause => {
      throw refused(cause);
    },
  );
  const signature = ran.stdout;
  if (ran.code !== 0 || !/^\[GNUPG:\] SIG_CREATED /m.test(ran.stderr) || !isOpenpgpSignature(signature)) throw refused();
  if (Buffer.byteLength(signature) > MAX_OPENPGP_SIGNATURE_BYTES) {
    throw new LockConfigurationError(
      `The OpenPGP key user.signingkey names makes signatures larger than ${MAX_OPENPGP_SIGNATURE_BYTES / 1024} KiB, which no reader checks; sign with an ed25519 or RSA key.`,
      { setting: 'user.signingkey' },
    );
  }
  return signature;
}

/**
 * What the reader's keyring (`home`, holding only the listed keys) says of `signature` over `message`:
 * the step's signature as the chain judges it, signed for the identity `listing` gives its primary key
 * or for no one. A signature too large to be one is bad, unread.
 */
export async function judgeOpenpgp(
  home: string,
  message: string,
  signature: string,
  listing: OpenpgpSigners | undefined,
  driver: string,
): Promise<StepSignature> {
  if (Buffer.byteLength(signature) > MAX_OPENPGP_SIGNATURE_BYTES) return { status: 'B', signer: '', kind: 'openpgp' };
  const sigFile = path.join(home, 'step.asc');
  fs.writeFileSync(sigFile, signature, { mode: 0o600 });
  try {
    const ran = await runGpg(['--no-autostart', '--status-fd=1', '--verify', sigFile, '-'], message, { home, timeoutMs: GPG_TIMEOUT_MS });
    return { ...stepSignature(gpgVerifyFields(ran.stdout), listing), kind: 'openpgp' };
  } catch (cause) {
    throw new LockBackendError(driver, "gpg could not be run to check the lock page's OpenPGP signatures; install GnuPG 2.", { cause });
  } finally {
    fs.rmSync(sigFile, { force: true });
  }
}
