import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { containerConfig, containerKey } from '../container/pageSettings';
import { signedPageDriver } from '../container/signedPage';
import {
  containerSettings,
  CONTAINER_FILE,
  MAX_CONTAINER_FILE_BYTES,
  parseContainerFile,
  type ContainerFile,
} from '../container/containerFile';
import { openDriver } from '../drivers';
import type { Driver } from '../stores/store';
import { MAX_ALLOWED_SIGNERS_BYTES } from '../stores/git/signersFile';
import { MAX_OPENPGP_FILE_BYTES } from '../chain/openpgpSigners';
import type { ResolvedConfig } from '../config';
import { LockConfigurationError, LockNoPageError, type PageLocation } from '../errors';
import type { GitCommand } from '../git/runner';
import { keptForever, type AuditLine, type LockRecord } from '../lockRecord';
import { parseRecord } from '../recordCodec';
import { pageLocation } from '../container/pageLocation';
import type { HistoryReach } from './verdict';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What the verifier reads: `.lockstep.json` as committed on the protected branch (never the work
 * tree, which is the commit under check), and the lock page with its history through the store's
 * own reader (the git driver's ref history, the same reader as `lockstep audit`; other drivers: the
 * page's bounded audit trail). Credentials come from the environment (the CI's secrets), as for any
 * command.
 */

/** `.lockstep.json` as committed at `revision` (a commit of the protected branch). */
export async function containerFileAt(git: GitCommand, revision: string): Promise<ContainerFile> {
  const spec = `${revision}:${CONTAINER_FILE}`;
  const size = Number((await git.raw(['cat-file', '-s', '--end-of-options', spec]).catch(() => '')).trim());
  if (!Number.isSafeInteger(size) || size <= 0) {
    throw new LockConfigurationError(
      `The protected branch has no ${CONTAINER_FILE} at ${revision.slice(0, 12)}; verify reads the container's settings from the branch as it was before the change under check.`,
      { setting: CONTAINER_FILE },
    );
  }
  if (size > MAX_CONTAINER_FILE_BYTES)
    throw new LockConfigurationError(`${CONTAINER_FILE} on the protected branch is larger than ${MAX_CONTAINER_FILE_BYTES / 1024} KiB.`, {
      setting: CONTAINER_FILE,
    });
  return parseContainerFile(await git.raw(['cat-file', 'blob', '--end-of-options', spec]));
}

/** Where the verifier reads the allowed signers of a signed page: the protected branch at the settings' own revision. */
export interface SignersAt {
  readonly git: GitCommand;
  /** The commit `.lockstep.json` was read at (before the change under check). */
  readonly revision: string;
  /**
   * Where the check keeps the last page it proved between runs (`--witness`, a CI cache): a page set
   * back past it reads tampered. Absent, each run proves the page afresh and cannot see a step that
   * was dropped before it ran.
   */
  readonly witnessFile?: string;
}

/**
 * The page now and its transition lines, oldest first, with how far back they reach. A signed page
 * (`allowedSigners`) is proven first, every step from its creation or last compaction, with the
 * allowed signers as the protected branch had them at `signers.revision` — never as the change under
 * check has them: a history with a step that is not proven is a tampered page (exit 5, the commit
 * named), never a verdict read from it.
 */
export async function readPageHistory(
  file: ContainerFile,
  root: string,
  env: Env,
  signers?: SignersAt,
): Promise<{ record: LockRecord; lines: AuditLine[]; reach: HistoryReach }> {
  return withProvenPage(containerConfig(file, root, env), file, signers, async ({ driver, key, record, revision }) => {
    if (driver.readHistory) {
      // Every write's own line, down through compaction snapshots, which keep the newest 2,000 (AUDIT_LOG_KEEP). Read
      // from the revision just proven (the page read once): a step written since is not listed unproven.
      const entries = await driver.readHistory(key, Infinity, revision);
      const lines = entries
        .map(e => e.line)
        .filter((l): l is AuditLine => l !== undefined)
        .reverse();
      // It reaches the page's beginning unless a compaction left its oldest entries out.
      const oldest = lines[0];
      if (oldest === undefined || oldest.action === 'init' || oldest.action === 'adopt') {
        return { record, lines, reach: { driver: driver.name, reach: 'complete', trimmed: false } };
      }
      return { record, lines, reach: { driver: driver.name, reach: 'page', trimmed: true } };
    }
    // The page's own trail: it began with init (or adopt) unless older lines were dropped to keep it bounded.
    const first = record.audit.find(l => l.outcome !== 'refused' && !keptForever(l));
    const trimmed = first !== undefined && first.action !== 'init' && first.action !== 'adopt';
    return { record, lines: [...record.audit], reach: { driver: driver.name, reach: 'page', trimmed } };
  });
}

/**
 * The page now, read with `config` (a reader without a clone: `status --remote`), a signed page
 * proven first exactly as {@link readPageHistory} proves it, with where it was read. A step that is
 * not proven is a tampered page (exit 5, the step named), never a record read from it.
 */
export async function readProvenPage(
  config: ResolvedConfig,
  file: ContainerFile,
  signers: SignersAt | undefined,
): Promise<{ record: LockRecord; page: PageLocation }> {
  return withProvenPage(config, file, signers, async ({ record, page }) => ({ record, page }));
}

/** Opens the page's store, reads the page, proves a signed one (every step, with `signers`), and hands the record to `use`. */
async function withProvenPage<T>(
  config: ResolvedConfig,
  file: ContainerFile,
  signers: SignersAt | undefined,
  use: (read: { driver: Driver; key: string; record: LockRecord; page: PageLocation; revision: string }) => Promise<T>,
): Promise<T> {
  const driver = await openDriver(config);
  try {
    const key = containerKey(config.prefix, file.container);
    const page = pageLocation(config, file.container, driver.name);
    const stored = await driver.read(key);
    if (stored === null) throw new LockNoPageError(page, undefined);
    if (file.allowedSigners !== undefined) {
      if (signers === undefined)
        throw new LockConfigurationError('A signed page is read by the verifier only with the allowed signers of the protected branch.', {
          setting: 'allowedSigners',
        });
      await proveFromCreation(driver, stored.revision, file as ContainerFile & { allowedSigners: string }, signers);
    }
    const record = parseRecord(stored.value, driver.name, file.container, containerSettings(file));
    return await use({ driver, key, record, page, revision: stored.revision });
  } finally {
    await driver.close();
  }
}

/** Proves a signed page's history: from the check's own witness when it keeps one, else afresh (a CI clone has none to trust). */
async function proveFromCreation(
  driver: Driver,
  revision: string,
  file: ContainerFile & { allowedSigners: string },
  signers: SignersAt,
): Promise<void> {
  const signed = signedPageDriver(driver);
  const text = await committedText(
    signers,
    file.allowedSigners,
    MAX_ALLOWED_SIGNERS_BYTES,
    'allowedSigners',
    'the lock page is signed by the keys in',
  );
  const { openpgpSigners, openpgpKeys } = file;
  const openpgp =
    openpgpSigners !== undefined && openpgpKeys !== undefined
      ? {
          signers: await committedText(
            signers,
            openpgpSigners,
            MAX_OPENPGP_FILE_BYTES,
            'openpgpSigners',
            "the lock page's OpenPGP signers (openpgpSigners) are listed in",
          ),
          keys: await committedText(
            signers,
            openpgpKeys,
            MAX_OPENPGP_FILE_BYTES,
            'openpgpKeys',
            "the lock page's OpenPGP keys (openpgpKeys) are in",
          ),
        }
      : undefined;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-verify-'));
  try {
    await signed.verifyHistory(revision, {
      container: file.container,
      settings: containerSettings(file),
      allowedSigners: async () => text,
      ...(openpgp !== undefined ? { openpgp: async () => openpgp } : {}),
      checkpointFile: signers.witnessFile ?? path.join(scratch, 'verified'),
    });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** A file of the protected branch at the checked revision, of at most `maxBytes`; a configuration error when it has none. */
async function committedText(signers: SignersAt, where: string, maxBytes: number, setting: string, says: string): Promise<string> {
  const spec = `${signers.revision}:${where}`;
  const size = Number((await signers.git.raw(['cat-file', '-s', '--end-of-options', spec]).catch(() => '')).trim());
  if (!Number.isSafeInteger(size) || size <= 0 || size > maxBytes) {
    throw new LockConfigurationError(
      `.lockstep.json says ${says} ${where}, and the protected branch has no such file (of at most ${maxBytes / 1024} KiB) at ${signers.revision.slice(0, 12)}.`,
      { setting },
    );
  }
  return signers.git.raw(['cat-file', 'blob', '--end-of-options', spec]);
}
