import { resolveConfig, type LockManagerOptions } from '../config';
import { openDriver } from '../drivers';
import { LockNoPageError, type PageLocation } from '../errors';
import * as protocol from '../lockRecord';
import type { LockRecord } from '../lockRecord';
import { parseRecord } from '../recordCodec';
import { containerSettings, driverOptions, type ContainerFile } from './containerFile';
import { pageLocation } from './pageLocation';
import { committedPage, containerKey, type Env } from './pageSettings';
import { signedPageDriver } from './signedPage';

/**
 * The lock page without a clone or an identity: the server's guard runs in a bare repository and
 * only reads the record (and appends a refusal to it); diagnosis reads it from a remote the same way.
 */

/**
 * How the server guard proves a signed page of a store whose writers are all participants (file,
 * SQL, Redis): the allowed signers as its pinned protected branch has them, and its own witness
 * kept in the guarded repository (stores/signedChainDriver.ts).
 */
export interface ServerProof {
  readonly allowedSigners: () => Promise<string>;
  readonly witnessFile: string;
}

/**
 * Reads a container's record without a clone or an identity: the server's guard runs in a bare
 * repository and only needs the record. The driver is closed before returning. A store without the
 * container's page throws {@link LockNoPageError}: a missing page is never a free lock.
 */
export async function readContainerRecord(
  file: ContainerFile,
  gitDir: string,
  env: Env,
  overrides: LockManagerOptions = {},
  proof?: ServerProof,
): Promise<LockRecord> {
  return (await readContainerPage(file, gitDir, env, overrides, proof)).record;
}

/** Like {@link readContainerRecord}, with the page it read (driver as opened, location without credentials, prefix). */
export async function readContainerPage(
  file: ContainerFile,
  gitDir: string,
  env: Env,
  overrides: LockManagerOptions = {},
  proof?: ServerProof,
): Promise<{ record: LockRecord; page: PageLocation }> {
  const config = resolveConfig({ ...driverOptions(file, gitDir), ...overrides }, env);
  const driver = await openDriver(config);
  try {
    const page = pageLocation(config, file.container, driver.name);
    const stored = await driver.read(containerKey(config.prefix, file.container));
    if (stored === null) throw new LockNoPageError(page, committedPage(file, gitDir, overrides));
    if (proof !== undefined && file.allowedSigners !== undefined && driver.name !== 'git') {
      await signedPageDriver(driver).verifyHistory(stored.revision, {
        container: file.container,
        settings: containerSettings(file),
        allowedSigners: proof.allowedSigners,
        checkpointFile: proof.witnessFile,
      });
    }
    return { record: parseRecord(stored.value, driver.name, file.container, containerSettings(file)), page };
  } finally {
    await driver.close();
  }
}

/**
 * Appends a guard's refusal of a protected push to the container's page (the server guard, which
 * has no clone): best effort, a few compare-and-swap attempts, folded with identical refusals.
 * Never throws: the refusal stands whether or not its audit line could be written.
 */
export async function auditRefusedPushOnPage(
  file: ContainerFile,
  gitDir: string,
  overrides: LockManagerOptions,
  request: { identity: string; grant: number; detail: string },
  now: number,
): Promise<boolean> {
  try {
    const config = resolveConfig({ ...driverOptions(file, gitDir), ...overrides }, {});
    const driver = await openDriver(config);
    try {
      const key = containerKey(config.prefix, file.container);
      for (let attempt = 0; attempt < 5; attempt++) {
        const stored = await driver.read(key);
        if (stored === null) return false;
        const outcome = protocol.auditRefusedPush(
          parseRecord(stored.value, driver.name, file.container, containerSettings(file)),
          request,
          now,
        );
        if (outcome.ok || outcome.record === undefined) return false;
        if ((await driver.compareAndSwap(key, stored.revision, outcome.record, { summary: outcome.summary ?? 'push refused' })).ok)
          return true;
      }
      return false;
    } finally {
      await driver.close();
    }
  } catch {
    return false;
  }
}
