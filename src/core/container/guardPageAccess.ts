import { resolveConfig, type LockManagerOptions, type ResolvedConfig } from '../config';
import { openDriver } from '../drivers';
import { LockNoPageError, type PageLocation } from '../errors';
import * as protocol from '../lockRecord';
import type { LockRecord } from '../lockRecord';
import { parseRecord } from '../recordCodec';
import type { Driver, VersionedRecord } from '../stores/store';
import { containerSettings, driverOptions, type ContainerFile } from './containerFile';
import { pageLocation } from './pageLocation';
import { containerKey } from './pageSettings';
import { signedPageDriver } from './signedPage';
import type { OpenpgpListingText } from '../chain/openpgpSigners';

/**
 * The lock page without a clone or an identity: the server's guard runs in a bare repository and
 * only reads the record (and appends a refusal to it); diagnosis reads it from a remote the same way.
 */

/**
 * How the server guard proves a signed page of a store whose writers are all participants (file,
 * SQL, Redis, etcd): the allowed signers (and OpenPGP listing) as its pinned protected branch has them, and its own witness
 * kept in the guarded repository (stores/signedChainDriver.ts).
 */
export interface ServerProof {
  readonly allowedSigners: () => Promise<string>;
  /** The OpenPGP listing as the pinned protected branch has it, when the container names one. */
  readonly openpgp?: () => Promise<OpenpgpListingText>;
  readonly witnessFile: string;
}

/**
 * One container's page opened without a clone: its store settings resolved once, from `.lockstep.json`
 * and the `overrides` alone (no environment: the store is the one pinned or committed, whatever the
 * caller's variables say), its driver opened once on first use and closed by {@link close}. The server
 * guard reads the page and, on a refusal, appends to it through the same connection, starting from that read.
 */
export class PageWithoutClone {
  private readonly config: ResolvedConfig;
  private readonly key: string;
  private driverPromise: Promise<Driver> | undefined;
  /** The page as {@link read} last found it: the first attempt of an audit that follows, instead of a second read. */
  private lastRead: VersionedRecord | undefined;

  constructor(
    readonly file: ContainerFile,
    gitDir: string,
    overrides: LockManagerOptions = {},
    private readonly open: (config: ResolvedConfig) => Promise<Driver> = openDriver,
  ) {
    this.config = resolveConfig({ ...driverOptions(file, gitDir), ...overrides }, {});
    this.key = containerKey(this.config.prefix, file.container);
  }

  /**
   * The record and where it was read (driver as opened, location without credentials, prefix). A store
   * without the container's page throws {@link LockNoPageError}: a missing page is never a free lock.
   * With `proof`, a signed page of a participants' store is proven first (the server guard).
   */
  async read(proof?: ServerProof): Promise<{ record: LockRecord; page: PageLocation }> {
    const driver = await this.driver();
    const { file } = this;
    const page = pageLocation(this.config, file.container, driver.name);
    const stored = await driver.read(this.key);
    if (stored === null) {
      // With no environment, the settings resolved are the committed ones: the page `.lockstep.json` names.
      const { container: _, ...committed } = pageLocation(this.config, file.container);
      throw new LockNoPageError(page, committed);
    }
    if (proof !== undefined && file.allowedSigners !== undefined && driver.name !== 'git') {
      await signedPageDriver(driver).verifyHistory(stored.revision, {
        container: file.container,
        settings: containerSettings(file),
        allowedSigners: proof.allowedSigners,
        ...(proof.openpgp !== undefined ? { openpgp: proof.openpgp } : {}),
        checkpointFile: proof.witnessFile,
      });
    }
    this.lastRead = stored;
    return { record: parseRecord(stored.value, driver.name, file.container, containerSettings(file)), page };
  }

  /**
   * Appends a guard's refusal of a protected push to the page: best effort, a few compare-and-swap
   * attempts, folded with identical refusals. Never throws: the refusal stands whether or not its
   * audit line could be written.
   */
  async auditRefusedPush(request: { identity: string; grant: number; detail: string }, now: number): Promise<boolean> {
    try {
      const driver = await this.driver();
      const { file } = this;
      for (let attempt = 0; attempt < 5; attempt++) {
        const stored = attempt === 0 && this.lastRead !== undefined ? this.lastRead : await driver.read(this.key);
        if (stored === null) return false;
        const outcome = protocol.auditRefusedPush(
          parseRecord(stored.value, driver.name, file.container, containerSettings(file)),
          request,
          now,
        );
        if (outcome.ok || outcome.record === undefined) return false;
        if ((await driver.compareAndSwap(this.key, stored.revision, outcome.record, { summary: outcome.summary ?? 'push refused' })).ok)
          return true;
      }
      return false;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    const driver = await this.driverPromise?.catch(() => undefined);
    this.driverPromise = undefined;
    await driver?.close();
  }

  private driver(): Promise<Driver> {
    this.driverPromise ??= this.open(this.config);
    return this.driverPromise;
  }
}

/** The page and where it was read, in one call (diagnosis): the driver is closed before returning. */
export async function readContainerPage(
  file: ContainerFile,
  gitDir: string,
  overrides: LockManagerOptions = {},
): Promise<{ record: LockRecord; page: PageLocation }> {
  const page = new PageWithoutClone(file, gitDir, overrides);
  try {
    return await page.read();
  } finally {
    await page.close();
  }
}
