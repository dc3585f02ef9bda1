import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveConfig, type DriverName, type DriverSetting, type LockManagerOptions, type ResolvedConfig } from '../config';
import { openDriver } from '../drivers';
import { LockConfigurationError, type PageLocation } from '../errors';
import { gitIn } from '../git/runner';
import { containerFileOnRemote, defaultBranch, openClone, resolveIdentity, type Clone } from './clone';
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
 * The refusals `init` makes before it writes anything, for a caller that asks the user questions
 * first (the extension): a repository inside another container's work tree, one without the shared
 * remote, a clone whose remote's default branch already has `.lockstep.json`. Fetches that branch.
 */
export async function checkInitAllowed(cwd: string, options: { remote?: string } = {}): Promise<void> {
  const clone = await openClone(cwd);
  if (fs.existsSync(path.join(clone.root, CONTAINER_FILE))) {
    throw new LockConfigurationError(
      `${CONTAINER_FILE} exists already: this repository is a container. Edit the file to change its settings.`,
      { setting: CONTAINER_FILE },
    );
  }
  await refuseWhereNoContainerBelongs(clone, options.remote ?? 'origin');
}

async function refuseWhereNoContainerBelongs(clone: Clone, remote: string): Promise<void> {
  await refuseNested(clone);
  await requireRemote(clone, remote);
  // A teammate made this repository a container and pushed it: this clone pulls the file, it does not make a second container.
  const initialised = await containerFileOnRemote(clone, remote, CONTAINER_FILE, { fetch: true });
  if (initialised !== undefined) {
    throw new LockConfigurationError(
      `${remote}/${initialised} already has a committed ${CONTAINER_FILE}: a teammate has made this repository a container, and this clone has not pulled it yet.` +
        ` Pull it (\`git pull\`) instead of running lockstep init, which would make a second container with a second lock page.`,
      { setting: CONTAINER_FILE },
    );
  }
}

/**
 * Makes the repository at `cwd` a container: writes `.lockstep.json` at its root with a new UUID
 * and the page's location (concrete driver, prefix, store location without credentials), and
 * creates the container's lock page there — the one page every clone reads (seed 001). Defaults:
 * you as the operator, the remote's default branch as the protected branch. The caller tells the
 * user to commit the file. Nothing is left behind when the page cannot be created.
 *
 * Refused (configuration errors, nothing written): a repository inside another container's work
 * tree, one without the shared remote, and a clone whose remote's default branch already has a
 * committed `.lockstep.json` (that teammate pulls it instead).
 */
export async function initContainer(
  cwd: string,
  options: InitOptions = {},
): Promise<{ root: string; file: ContainerFile; path: string; page: PageLocation }> {
  const env = options.env ?? process.env;
  const clone = await openClone(cwd);
  const target = path.join(clone.root, CONTAINER_FILE);
  if (fs.existsSync(target)) {
    throw new LockConfigurationError(
      `${CONTAINER_FILE} exists already: this repository is a container. Edit the file to change its settings.`,
      { setting: CONTAINER_FILE },
    );
  }
  const remote = options.remote ?? 'origin';
  // The schema's rule (remote and gitRemote of .lockstep.json): a name of this clone's remotes, never a path or a URL.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(remote) || remote.length > 100) {
    throw new LockConfigurationError(
      "The remote must be the name of one of this clone's remotes, such as origin (letters, digits, . _ -, starting with a letter or digit), not a path or a URL.",
      { setting: 'remote' },
    );
  }
  // An explicit --driver wins over LOCKSTEP_DRIVER here: it is what the user asked to commit.
  const pageEnv: Env = options.driver === undefined ? env : { ...env, LOCKSTEP_DRIVER: options.driver };
  const config = resolveConfig({ gitRemote: remote, ...options.driverOptions, gitDir: clone.root }, pageEnv);
  if (config.driver === 'memory') {
    throw new LockConfigurationError(
      'The memory driver keeps a lock page only inside the process that made it, so a container committed on it would have no page' +
        ' for the next command or clone. Choose a driver other processes read: --driver file (the default), sql, redis, etcd or git.',
      { setting: 'driver' },
    );
  }
  await refuseWhereNoContainerBelongs(clone, remote);
  const driver = await decideDriver(config);
  const operators = options.operators?.length ? [...options.operators] : [await resolveIdentity(clone, env, options.identity)];
  const branches = options.protectedBranches?.length ? [...options.protectedBranches] : [await defaultBranch(clone, remote)];
  const file = newContainerFile(branches, operators, {
    driver,
    remote,
    serverGuard: options.serverGuard ?? false,
    ...committedLocation(config, driver),
  });
  writeContainerFile(clone.root, file);
  try {
    // The page is created exactly where the committed file points (the environment still supplies credentials).
    const container = await Container.open({
      cwd: clone.root,
      env: { ...env, LOCKSTEP_DRIVER: undefined },
      ...(options.identity ? { overrides: { identity: options.identity } } : {}),
    });
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

/**
 * A repository inside another container's work tree (a clone or submodule within it) is no
 * container of its own: its files would be under two locks, on two pages. Walks up through
 * enclosing repositories to the outermost.
 */
async function refuseNested(clone: Clone): Promise<void> {
  let inner = clone.root;
  for (;;) {
    const parent = path.dirname(inner);
    if (parent === inner) return;
    const outer = (
      await gitIn(parent)
        .raw(['rev-parse', '--show-toplevel'])
        .catch(() => '')
    ).trim();
    if (outer === '' || outer === inner) return;
    if (fs.existsSync(path.join(outer, CONTAINER_FILE))) {
      throw new LockConfigurationError(
        `This repository lies inside the work tree of the container at ${outer} (it has ${CONTAINER_FILE}); a container inside another` +
          ' would put the same files under two locks, on two lock pages. Work under the enclosing container (run lockstep there),' +
          ' or move this repository out of its folder and run lockstep init there.',
        { setting: 'cwd' },
      );
    }
    inner = outer;
  }
}

/** The shared remote is the register every landing goes to (seed 001): a container without it has nothing to fence. */
async function requireRemote(clone: Clone, remote: string): Promise<void> {
  const remotes = (await clone.git.raw(['remote']))
    .split('\n')
    .map(r => r.trim())
    .filter(r => r !== '');
  if (remotes.includes(remote)) return;
  if (remotes.length === 0) {
    throw new LockConfigurationError(
      `This repository has no remote. A container is shared through its remote (every landing is a push to it): add it with \`git remote add ${remote} URL\`,` +
        ' push your branch, then run lockstep init again.',
      { setting: 'remote' },
    );
  }
  throw new LockConfigurationError(
    `This repository has no remote named ${remote} (it has ${remotes.join(', ')}). Name the shared remote with --remote NAME,` +
      ` or add it with \`git remote add ${remote} URL\`.`,
    { setting: 'remote' },
  );
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
    case 'file':
      return { ...where, path: config.path };
    case 'redis':
      return config.redisUrl ? { ...where, redisUrl: withoutCredentials(config.redisUrl) } : where;
    case 'sql':
      return {
        ...where,
        databaseUrl: config.databaseUrl ? withoutCredentials(config.databaseUrl) : pageLocation(config, '', 'sql').location,
      };
    case 'etcd':
      return { ...where, etcdEndpoints: pageLocation(config, '', 'etcd').location };
    case 'git':
      return { ...where, gitRemote: config.gitRemote };
    case 'memory':
      return where;
  }
}
