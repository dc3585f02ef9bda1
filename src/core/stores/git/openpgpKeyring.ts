import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockConfigurationError } from '../../errors';
import { GPG_TIMEOUT_MS, runGpg } from '../gpgProcess';

/**
 * Fills a reader's own empty OpenPGP keyring (a private `GNUPGHOME`, signersFile.ts) with the keys a
 * signed page lists (`openpgpKeys` in `.lockstep.json`) and trusts exactly the listed fingerprints
 * (ownertrust 6, ultimate), so that git's `%G?` is `G` for a signature by a listed key and never for
 * one the reader's own keyring happens to trust (docs/protocol.md "OpenPGP (GPG) signatures"). gpg
 * runs with `--no-autostart`: importing public keys needs no agent, and none is left running in a
 * keyring that is removed afterwards. Two gpg processes, only for a page that lists OpenPGP keys.
 */
export async function importListedKeys(keyring: string, armoredKeys: string, fingerprints: readonly string[]): Promise<void> {
  const keysFile = path.join(keyring, 'listed-keys.asc');
  fs.writeFileSync(keysFile, armoredKeys, { mode: 0o600 });
  await gpg(keyring, ['--import', keysFile], '');
  await gpg(keyring, ['--import-ownertrust'], fingerprints.map(f => `${f}:6:\n`).join(''));
}

async function gpg(keyring: string, args: readonly string[], input: string): Promise<void> {
  const refused = (cause?: unknown) =>
    new LockConfigurationError(
      "gpg could not import the OpenPGP keys this lock page lists (openpgpKeys in .lockstep.json) into the reader's keyring; install GnuPG 2, and check that the file holds armored public keys (gpg --armor --export FPR).",
      { setting: 'openpgpKeys', ...(cause === undefined ? {} : { cause }) },
    );
  const ran = await runGpg(['--no-autostart', '--quiet', ...args], input, { home: keyring, timeoutMs: GPG_TIMEOUT_MS }).catch(cause => {
    throw refused(cause);
  });
  if (ran.code !== 0) throw refused(ran.stderr.slice(0, 2000));
}
