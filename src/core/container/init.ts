import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveConfig, type DriverSetting, type LockManagerOptions, type ResolvedConfig } from '../config';
import { openDriver } from '../drivers';
import { LockConfigurationError, type PageLocation } from '../errors';
import type { DriverName } from '../stores/store';
import { defaultBranch, openClone, resolveIdentity } from './clone';
import { Container } from './container';
import { CONTAINER_FILE, newContainerFile, writeContainerFile, type ContainerFile } from './containerFile';
import { pageLocation, withoutCredentials } from './pageLocation';

type Env = Readonly<Record<string, string | undefined>>;

export interface InitOptions {
  /** Overrides LOCKSTEP_DRIVER. `auto` is decided here, once, and the driver it picks is written. */
  readonly driver?: DriverSetting;
  readonly operators?: readonly string[];
  readonly protectedBranches?: readonly string[];
  readonly remote?: string;
  readonly serverGuard?: boolean;
  readonly env?: Env;
  readonly identity?: string;
  /** Settings between the environment and the defaults (VS Code's `lockstep.*`). */
  readonly driverOptions?: LockManagerOptions;
}

/**
 * Makes the repository at `cwd` a container: writes `.lockstep.json` at its root with a new UUID
 * and the page's location (concrete driver, prefix, store location without credentials), and
 * creates the container's lock page there — the one page every clone reads (seed 001). Defaults:
 * you as the operator, the remote's default branch as the protected branch. The caller tells the
 * user to commit the file. Nothing is left behind when the page cannot be created.
 */
export async function initContainer(cwd: string, options: InitOptions = {}): Promise<{ root: string; file: ContainerFile; path: string; page: PageLocation }> {
  const env = options.env ?? process.env;
  const clone = await openClone(cwd);
  const target = path.join(clone.root, CONTAINER_FILE);
  if (fs.existsSync(target)) {
    throw new LockConfigurationError(`${CONTAINER_FILE} exists already: this repository is a container. Edit the file to change its settings.`, { setting: CONTAINER_FILE });
  }
  const remote = options.remote ?? 'origin';
  // An explicit --driver wins over LOCKSTEP_DRIVER here: it is what the user asked to commit.
  const pageEnv: Env = options.driver === undefined ? env : { ...env, LOCKSTEP_DRIVER: options.driver };
  const config = resolveConfig({ gitRemote: remote, ...options.driverOptions, gitDir: clone.root }, pageEnv);
  const driver = await decideDriver(config);
  const operators = options.operators?.length ? [...options.operators] : [await resolveIdentity(clone, env, options.identity)];
  const branches = options.protectedBranches?.length ? [...options.protectedBranches] : [await defaultBranch(clone, remote)];
  const file = newContainerFile(branches, operators, { driver, remote, serverGuard: options.serverGuard ?? false, ...committedLocation(config, driver) });
  writeContainerFile(clone.root, file);
  try {
    // The page is created exactly where the committed file points (the environment still supplies credentials).
    const container = await Container.open({ cwd: clone.root, env: { ...env, LOCKSTEP_DRIVER: undefined }, ...(options.identity ? { overrides: { identity: options.identity } } : {}) });
    try {
      await container.createPage();
      return { root: clone.root, file, path: target, page: await container.page() };
    } finally {
      await container.close();
    }
  } catch (error) {
    fs.rmSync(target, { force: true });
    throw error;
  }
}

/** `auto` is not a container driver: init decides it once, here, and commits what it chose. */
async function decideDriver(config: ResolvedConfig): Promise<DriverName> {
  if (config.driver !== 'auto') return config.driver;
  const probe = await openDriver(config);
  await probe.close();
  return probe.name;
}

/** The page's location as `.lockstep.json` records it: prefix always, the store's place per driver. */
function committedLocation(config: ResolvedConfig, driver: DriverName): Partial<ContainerFile> {
  const where: Partial<ContainerFile> = { prefix: config.prefix };
  switch (driver) {
    case 'file': return { ...where, path: config.path };
    case 'redis': return config.redisUrl ? { ...where, redisUrl: withoutCredentials(config.redisUrl) } : where;
    case 'sql': return { ...where, databaseUrl: config.databaseUrl ? withoutCredentials(config.databaseUrl) : pageLocation(config, '', 'sql').location };
    case 'git': return { ...where, gitRemote: config.gitRemote };
    case 'memory': return where;
  }
}
