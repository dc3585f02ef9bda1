import * as path from 'node:path';
import { LockBackendError, LockConfigurationError } from '../errors';
import type { ContainerSettings } from '../lockRecord';
import type { Driver } from '../stores/store';
import type { SigningPolicy } from '../stores/git/verifiedHistory';
import { MAX_ALLOWED_SIGNERS_BYTES } from '../stores/git/signersFile';
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
  return {
    container: file.container,
    settings,
    allowedSigners: () => allowedSignersText(clone, file),
    checkpointFile: path.join(sessionDir(clone.gitDir), `verified-${key.slice(0, 32)}`),
  };
}

/**
 * The allowed signers file on `<remote>/<first protected branch>` as this clone fetched it; fetched
 * once when the clone does not have it yet. Public keys only, bounded.
 */
export async function allowedSignersText(
  clone: Clone,
  file: ContainerFile & { allowedSigners: string },
  options: { fetch?: boolean } = {},
): Promise<string> {
  const branch = file.protectedBranches[0];
  const tracking = `refs/remotes/${file.remote}/${branch}`;
  const read = async (): Promise<string | undefined> => {
    const size = await clone.git.run(['cat-file', '-s', '--end-of-options', `${tracking}:${file.allowedSigners}`]);
    if (size.code !== 0) return undefined;
    if (Number(size.stdout.toString('utf8').trim()) > MAX_ALLOWED_SIGNERS_BYTES) {
      throw new LockConfigurationError(
        `The allowed signers file (${file.allowedSigners}) on ${file.remote}/${branch} is larger than ${MAX_ALLOWED_SIGNERS_BYTES / 1024} KiB; keep public keys only.`,
        { setting: 'allowedSigners' },
      );
    }
    return clone.git.raw(['cat-file', 'blob', '--end-of-options', `${tracking}:${file.allowedSigners}`]);
  };
  let text = options.fetch ? undefined : await read();
  if (text === undefined) {
    await fetchBranch(clone.git, file.remote, branch, tracking).catch(cause => {
      throw new LockBackendError(
        'git',
        `The protected branch ${branch} could not be fetched from ${file.remote} to read the allowed signers file; try again when the remote is reachable.`,
        { cause },
      );
    });
    text = await read();
  }
  if (text === undefined) {
    throw new LockConfigurationError(
      `.lockstep.json says the lock page is signed by the keys listed in ${file.allowedSigners}, and ${file.remote}/${branch} has no such file.` +
        " An operator lands it (ssh-keygen's allowed_signers format: an identity, then its public key, one per line); lockstep doctor shows how.",
      { setting: 'allowedSigners' },
    );
  }
  return text;
}
