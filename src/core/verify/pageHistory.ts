import { containerConfig, containerKey } from '../container/container';
import { containerSettings, CONTAINER_FILE, MAX_CONTAINER_FILE_BYTES, parseContainerFile, type ContainerFile } from '../container/containerFile';
import { openDriver } from '../drivers';
import { LockConfigurationError, LockNoPageError } from '../errors';
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
    throw new LockConfigurationError(`The protected branch has no ${CONTAINER_FILE} at ${revision.slice(0, 12)}; verify reads the container's settings from the branch as it was before the change under check.`, { setting: CONTAINER_FILE });
  }
  if (size > MAX_CONTAINER_FILE_BYTES) throw new LockConfigurationError(`${CONTAINER_FILE} on the protected branch is larger than ${MAX_CONTAINER_FILE_BYTES / 1024} KiB.`, { setting: CONTAINER_FILE });
  return parseContainerFile(await git.raw(['cat-file', 'blob', '--end-of-options', spec]));
}

/** The page now and its transition lines, oldest first, with how far back they reach. */
export async function readPageHistory(file: ContainerFile, root: string, env: Env): Promise<{ record: LockRecord; lines: AuditLine[]; reach: HistoryReach }> {
  const config = containerConfig(file, root, env);
  const driver = await openDriver(config);
  try {
    const key = containerKey(config.prefix, file.container);
    const stored = await driver.read(key);
    if (stored === null) throw new LockNoPageError(pageLocation(config, file.container, driver.name), undefined);
    const record = parseRecord(stored.value, driver.name, file.container, containerSettings(file));
    if (driver.readHistory) {
      // Every write's own line, down through compaction snapshots: nothing is ever evicted from it.
      const entries = await driver.readHistory(key, Infinity);
      const lines = entries.map(e => e.line).filter((l): l is AuditLine => l !== undefined).reverse();
      return { record, lines, reach: { driver: driver.name, reach: 'complete', trimmed: false } };
    }
    // The page's own trail: it began with init (or adopt) unless older lines were dropped to keep it bounded.
    const first = record.audit.find(l => l.outcome !== 'refused' && !keptForever(l));
    const trimmed = first !== undefined && first.action !== 'init' && first.action !== 'adopt';
    return { record, lines: [...record.audit], reach: { driver: driver.name, reach: 'page', trimmed } };
  } finally {
    await driver.close();
  }
}
