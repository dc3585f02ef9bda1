import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importListedKeys } from './openpgpKeyring';

/** The largest allowed signers file read (a team's public keys: a few hundred bytes each). */
export const MAX_ALLOWED_SIGNERS_BYTES = 1024 * 1024;

/**
 * Runs `use` with the allowed signers text (ssh-keygen's ALLOWED SIGNERS format, as committed on the
 * protected branch) in a private temporary file, for git's `gpg.ssh.allowedSignersFile`, and with
 * `env` for the git that verifies against it: `GNUPGHOME` an empty keyring of its own, so that an
 * OpenPGP or X.509 signature is never judged by the reader's own keyring (which would trust keys the
 * list does not hold, differently in every clone): it reads as not verified, in every reader alike.
 * With `openpgp` (a page that lists OpenPGP keys), that keyring holds the listed keys, trusted by
 * their listed fingerprints only (openpgpKeyring.ts). Both are removed afterwards. The files hold
 * public keys only.
 */
export async function withSignersFile<T>(
  text: string,
  use: (file: string, env: Readonly<Record<string, string>>) => Promise<T>,
  openpgp?: { readonly keys: string; readonly fingerprints: readonly string[] },
): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-signers-'));
  try {
    const file = path.join(dir, 'allowed_signers');
    fs.writeFileSync(file, text, { mode: 0o600 });
    const keyring = path.join(dir, 'gnupg');
    fs.mkdirSync(keyring, { mode: 0o700 });
    if (openpgp !== undefined && openpgp.fingerprints.length > 0) await importListedKeys(keyring, openpgp.keys, openpgp.fingerprints);
    return await use(file, { GNUPGHOME: keyring });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
