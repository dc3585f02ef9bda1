import * as path from 'node:path';
import { LockBackendError, LockConfigurationError } from '../errors';
import type { ContainerSettings } from '../lockRecord';
import type { Driver } from '../stores/store';
import type { SigningPolicy } from '../stores/git/verifiedHistory';
import { MAX_ALLOWED_SIGNERS_BYTES } from '../stores/git/signersFile';
import { MAX_OPENPGP_FILE_BYTES, type OpenpgpListingText } from '../chain/openpgpSigners';
import { fetchBranch, type Clone } from './clone';
import type { ContainerFile } from './containerFile';
import { sessionDir } from './session';

/**
 * A clone's side of a signed lock page (`allowedSigners` in `.lockstep.json`; git driver, and the
 * file, SQL and Redis drivers through stores/signedChainDriver.ts): where the
 * trusted list of signers comes from — the allowed signers file as the register's first protected
 * branch has it (so it changes only by a landing), never the work tree — and where the clone keeps
 * the last step it verified. The proof itself is verifiedHistory.ts.
 */

/** The part of a driver that proves a history and replaces a tampered one (gitDriver.ts, signedChainDriver.ts). */
export interface SignedPageDriver extends Driver {
  verifyHistory(revision: string, policy: SigningPolicy): Promise<void>;
  replaceRecord(key: string, expectedRevision: string, next: unknown): Promise<{ ok: true; revision: string } | { ok: false }>;
}

export function isSignedPageDriver(driver: Driver): driver is SignedPageDriver {
  const d = driver as Partial<SignedPageDriver>;
  return typeof d.verifyHistory === 'function' && typeof d.replaceRecord === 'function';
}

/** The driver of a container whose page must be signed; a configuration error for any other driver. */
export function signedPageDriver(driver: Driver): SignedPageDriver {
  if (isSignedPageDriver(driver)) return driver;
  throw new LockConfigurationError(
    `.lockstep.json's allowedSigners needs a driver that keeps a signed history (git, file, SQL, Redis), and this page is on the ${driver.name} driver.`,
    { setting: 'allowedSigners' },
  );
}

export function signingPolicy(
  clone: Clone,
  file: ContainerFile & { allowedSigners: string },
  settings: ContainerSettings,
  key: string,
): SigningPolicy {
  const openpgp = openpgpListingReader(clone, file);
  return {
    container: file.container,
    settings,
    allowedSigners: () => allowedSignersText(clone, file),
    ...(openpgp !== undefined ? { openpgp } : {}),
    checkpointFile: path.join(sessionDir(clone.gitDir), `verified-${key.slice(0, 32)}`),
  };
}

/**
 * The allowed signers file on `<remote>/<first protected branch>` as this clone fetched it; fetched
 * once when the clone does not have it yet. Public keys only, bounded.
 */
export function allowedSignersText(
  clone: Clone,
  file: ContainerFile & { allowedSigners: string },
  options: { fetch?: boolean } = {},
): Promise<string> {
  return protectedFileText(
    clone,
    file,
    {
      path: file.allowedSigners,
      setting: 'allowedSigners',
      what: 'the allowed signers file',
      missing:
        `.lockstep.json says the lock page is signed by the keys listed in ${file.allowedSigners}, and ${file.remote}/${file.protectedBranches[0]} has no such file.` +
        " An operator lands it (ssh-keygen's allowed_signers format: an identity, then its public key, one per line); lockstep doctor shows how.",
    },
    MAX_ALLOWED_SIGNERS_BYTES,
    options,
  );
}

/**
 * The OpenPGP listing (`openpgpSigners`, `openpgpKeys`) on the first protected branch, read as the
 * allowed signers file is; undefined when the container names none.
 */
export function openpgpListingReader(
  clone: Clone,
  file: ContainerFile,
  options: { fetch?: boolean } = {},
): (() => Promise<OpenpgpListingText>) | undefined {
  const { openpgpSigners, openpgpKeys } = file;
  if (openpgpSigners === undefined || openpgpKeys === undefined) return undefined;
  const missing = (where: string) =>
    `.lockstep.json says the lock page's OpenPGP signers are listed in ${where}, and ${file.remote}/${file.protectedBranches[0]} has no such file.` +
    ' An operator lands openpgpSigners (an identity, then its primary key fingerprint, one per line) and openpgpKeys (gpg --armor --export FPR …).';
  return async () => ({
    signers: await protectedFileText(
      clone,
      file,
      { path: openpgpSigners, setting: 'openpgpSigners', what: 'the openpgpSigners file', missing: missing(openpgpSigners) },
      MAX_OPENPGP_FILE_BYTES,
      options,
    ),
    keys: await protectedFileText(
      clone,
      file,
      { path: openpgpKeys, setting: 'openpgpKeys', what: 'the openpgpKeys file', missing: missing(openpgpKeys) },
      MAX_OPENPGP_FILE_BYTES,
      options,
    ),
  });
}

/** A committed file of `<remote>/<first protected branch>`, at most `maxBytes`, fetched once when the clone does not have it. */
async function protectedFileText(
  clone: Clone,
  file: ContainerFile,
  wanted: { path: string; setting: string; what: string; missing: string },
  maxBytes: number,
  options: { fetch?: boolean },
): Promise<string> {
  const branch = file.protectedBranches[0];
  const tracking = `refs/remotes/${file.remote}/${branch}`;
  const read = async (): Promise<string | undefined> => {
    const size = await clone.git.run(['cat-file', '-s', '--end-of-options', `${tracking}:${wanted.path}`]);
    if (size.code !== 0) return undefined;
    if (Number(size.stdout.toString('utf8').trim()) > maxBytes) {
      throw new LockConfigurationError(
        `${wanted.what[0].toUpperCase()}${wanted.what.slice(1)} (${wanted.path}) on ${file.remote}/${branch} is larger than ${maxBytes / 1024} KiB; keep public keys only.`,
        { setting: wanted.setting },
      );
    }
    return clone.git.raw(['cat-file', 'blob', '--end-of-options', `${tracking}:${wanted.path}`]);
  };
  let text = options.fetch ? undefined : await read();
  if (text === undefined) {
    await fetchBranch(clone.git, file.remote, branch, tracking).catch(cause => {
      throw new LockBackendError(
        'git',
        `The protected branch ${branch} could not be fetched from ${file.remote} to read ${wanted.what}; try again when the remote is reachable.`,
        { cause },
      );
    });
    text = await read();
  }
  if (text === undefined) throw new LockConfigurationError(wanted.missing, { setting: wanted.setting });
  return text;
}
