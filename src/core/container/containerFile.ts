import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DRIVER_SETTINGS, MAX_GIT_TIMEOUT_SECONDS, type DriverSetting, type LockManagerOptions } from '../config';
import { SECOND } from '../clock';
import { LockConfigurationError, LockRefusedError } from '../errors';
import { MAX_HOLD_MS, type ContainerSettings } from '../lockRecord';

/** The committed file that makes a git repository a Lockstep container. */
export const CONTAINER_FILE = '.lockstep.json';

/** `.lockstep.json` as written in the repository. Durations are in seconds. */
export interface ContainerFile {
  /** The container's UUID (v4). */
  container: string;
  driver: DriverSetting;
  prefix?: string;
  /** File driver folder (absolute), written by `init`; left out, the default folder (~/.lockstep/store). */
  path?: string;
  /** Never a URL with credentials: those belong in LOCKSTEP_REDIS_URL / LOCKSTEP_DATABASE_URL. */
  redisUrl?: string;
  databaseUrl?: string;
  /** Git driver: the remote that holds the lock ref (default origin). */
  gitRemote?: string;
  /** Git driver: how long one git command may run, in whole seconds (default 5; LOCKSTEP_GIT_TIMEOUT_SECONDS wins). */
  gitTimeoutSeconds?: number;
  /** Branches whose landing is fenced (default: the remote's default branch). */
  protectedBranches: string[];
  /** The remote that is the register (default origin). */
  remote: string;
  leaseTtlSeconds: number;
  heartbeatSeconds: number;
  windowSeconds: number;
  operators: string[];
  /** True when the shared remote runs `lockstep guard pre-receive`: pushes then carry a proof of grant. */
  serverGuard: boolean;
}

export const CONTAINER_DEFAULTS = {
  driver: 'file' as DriverSetting,
  remote: 'origin',
  leaseTtlSeconds: 2 * 60 * 60,
  heartbeatSeconds: 10 * 60,
  windowSeconds: 15 * 60,
  serverGuard: false,
};

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function newContainerFile(protectedBranches: string[], operators: string[], overrides: Partial<ContainerFile> = {}): ContainerFile {
  return validate({
    container: randomUUID(),
    ...CONTAINER_DEFAULTS,
    protectedBranches,
    operators,
    ...overrides,
  });
}

export function readContainerFile(root: string): ContainerFile {
  const file = path.join(root, CONTAINER_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LockRefusedError('not-initialised', `This repository has no ${CONTAINER_FILE}, so it is not a Lockstep container here. If a teammate`
        + ' has made it one, pull the committed file (`git pull`); otherwise run `lockstep init` and commit .lockstep.json.');
    }
    throw new LockConfigurationError(`${CONTAINER_FILE} could not be read; check its permissions.`, { setting: CONTAINER_FILE, cause: error });
  }
  return parseContainerFile(text);
}

/** Parses and validates the text of a `.lockstep.json` (as committed, e.g. read from a branch). */
export function parseContainerFile(text: string): ContainerFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new LockConfigurationError(`${CONTAINER_FILE} is not valid JSON; fix it or restore it from git.`, { setting: CONTAINER_FILE, cause });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new LockConfigurationError(`${CONTAINER_FILE} must hold a JSON object.`, { setting: CONTAINER_FILE });
  }
  return validate(withDefaults(raw));
}

/** A `.lockstep.json` object with the settings it leaves out filled from the defaults (not validated). */
export function withDefaults(raw: object): ContainerFile {
  return { ...CONTAINER_DEFAULTS, protectedBranches: [], operators: [], ...raw } as unknown as ContainerFile;
}

export function writeContainerFile(root: string, value: ContainerFile): void {
  fs.writeFileSync(path.join(root, CONTAINER_FILE), JSON.stringify(value, null, 2) + '\n');
}

function validate(value: ContainerFile): ContainerFile {
  const bad = (setting: string, what: string): never => {
    throw new LockConfigurationError(`${CONTAINER_FILE}: ${setting} ${what}.`, { setting });
  };
  if (typeof value.container !== 'string' || !UUID_V4.test(value.container)) bad('container', 'must be a version 4 UUID');
  if (value.driver === 'auto') {
    bad('driver', 'is "auto", which is not a container driver: every clone must read the same lock page, and auto may pick another store'
      + ' in another process. Write the driver it stands for: "redis" (with redisUrl and prefix) or "file" (with path);'
      + ' `lockstep init --driver auto` writes it for a new container');
  }
  if (!DRIVER_SETTINGS.includes(value.driver)) bad('driver', `must be one of ${DRIVER_SETTINGS.filter(d => d !== 'auto').join(', ')}`);
  if (!Array.isArray(value.protectedBranches) || !value.protectedBranches.every(b => typeof b === 'string' && /^[A-Za-z0-9._/-]+$/.test(b))) {
    bad('protectedBranches', 'must be a list of branch names');
  }
  if (typeof value.remote !== 'string' || !/^[A-Za-z0-9._-]+$/.test(value.remote)) bad('remote', 'must be a remote name such as origin');
  seconds(value.leaseTtlSeconds, 60, MAX_HOLD_MS / SECOND, 'leaseTtlSeconds');
  seconds(value.heartbeatSeconds, 5, value.leaseTtlSeconds / 2, 'heartbeatSeconds');
  seconds(value.windowSeconds, 1, 24 * 60 * 60, 'windowSeconds');
  if (!Array.isArray(value.operators) || !value.operators.every(o => typeof o === 'string' && o.length > 0)) bad('operators', 'must be a list of identities');
  if (typeof value.serverGuard !== 'boolean') bad('serverGuard', 'must be true or false');
  if (value.gitTimeoutSeconds !== undefined && !(Number.isInteger(value.gitTimeoutSeconds) && value.gitTimeoutSeconds >= 1 && value.gitTimeoutSeconds <= MAX_GIT_TIMEOUT_SECONDS)) {
    bad('gitTimeoutSeconds', `must be a whole number of seconds from 1 to ${MAX_GIT_TIMEOUT_SECONDS}`);
  }
  for (const key of ['redisUrl', 'databaseUrl'] as const) {
    const url = value[key];
    if (url !== undefined && /\/\/[^/@]*:[^/@]*@/.test(url)) {
      bad(key, 'must not contain a password (it would be committed); set it in the environment instead');
    }
  }
  return value;
}

function seconds(value: unknown, min: number, max: number, setting: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new LockConfigurationError(`${CONTAINER_FILE}: ${setting} must be a number of seconds from ${min} to ${max}.`, { setting });
  }
}

export function containerSettings(file: ContainerFile): ContainerSettings & { heartbeatMs: number } {
  return {
    leaseTtlMs: file.leaseTtlSeconds * SECOND,
    windowMs: file.windowSeconds * SECOND,
    heartbeatMs: file.heartbeatSeconds * SECOND,
    operators: file.operators,
  };
}

/** The driver options `.lockstep.json` contributes (the environment still overrides them). */
export function driverOptions(file: ContainerFile, root: string): LockManagerOptions {
  return {
    driver: file.driver,
    ...(file.prefix !== undefined ? { prefix: file.prefix } : {}),
    ...(file.path !== undefined ? { path: file.path } : {}),
    ...(file.redisUrl !== undefined ? { redisUrl: file.redisUrl } : {}),
    ...(file.databaseUrl !== undefined ? { databaseUrl: file.databaseUrl } : {}),
    gitDir: root,
    gitRemote: file.gitRemote ?? file.remote,
    ...(file.gitTimeoutSeconds !== undefined ? { gitTimeoutMs: file.gitTimeoutSeconds * SECOND } : {}),
  };
}

