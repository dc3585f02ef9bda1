import * as fs from 'node:fs';
import * as path from 'node:path';
import { DRIVER_SETTINGS, type DriverSetting } from '../config';
import { LockConfigurationError } from '../errors';
import { defaultBranch, openClone, resolveIdentity } from './clone';
import { CONTAINER_FILE, newContainerFile, writeContainerFile, type ContainerFile } from './containerFile';

export interface InitOptions {
  readonly driver?: DriverSetting;
  readonly operators?: readonly string[];
  readonly protectedBranches?: readonly string[];
  readonly remote?: string;
  readonly serverGuard?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly identity?: string;
}

/**
 * Makes the repository at `cwd` a container: writes `.lockstep.json` at its root with a new UUID.
 * Defaults: you as the operator, the remote's default branch as the protected branch. The caller
 * tells the user to commit the file.
 */
export async function initContainer(cwd: string, options: InitOptions = {}): Promise<{ root: string; file: ContainerFile; path: string }> {
  const clone = await openClone(cwd);
  const target = path.join(clone.root, CONTAINER_FILE);
  if (fs.existsSync(target)) {
    throw new LockConfigurationError(`${CONTAINER_FILE} exists already: this repository is a container. Edit the file to change its settings.`, { setting: CONTAINER_FILE });
  }
  const driver = options.driver ?? 'file';
  if (!DRIVER_SETTINGS.includes(driver)) {
    throw new LockConfigurationError(`The driver must be one of ${DRIVER_SETTINGS.join(', ')}.`, { setting: 'driver' });
  }
  const remote = options.remote ?? 'origin';
  const operators = options.operators?.length ? [...options.operators] : [await resolveIdentity(clone, options.env ?? process.env, options.identity)];
  const branches = options.protectedBranches?.length ? [...options.protectedBranches] : [await defaultBranch(clone, remote)];
  const file = newContainerFile(branches, operators, { driver, remote, serverGuard: options.serverGuard ?? false });
  writeContainerFile(clone.root, file);
  return { root: clone.root, file, path: target };
}
