import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import containerSchema from '../../../schemas/lockstep.schema.json';
import type { DriverSetting, LockManagerOptions } from '../config';
import { SECOND } from '../clock';
import { LockConfigurationError, LockRefusedError } from '../errors';
import { checkAgainstSchema, type SchemaNode, type SchemaViolation } from '../jsonSchemaCheck';
import type { ContainerSettings } from '../lockRecord';

/** The committed file that makes a git repository a Lockstep container. */
export const CONTAINER_FILE = '.lockstep.json';

/** `.lockstep.json` as written in the repository. Durations are in seconds. */
export interface ContainerFile {
  /** The schema's address, for editors (schemas/lockstep.schema.json); not read otherwise. */
  $schema?: string;
  /** The container's UUID (v4). */
  container: string;
  driver: DriverSetting;
  prefix?: string;
  /** File driver folder (absolute), written by `init`; left out, the default folder (~/.lockstep/store). */
  path?: string;
  /** Never a URL with credentials: those belong in LOCKSTEP_REDIS_URL / LOCKSTEP_DATABASE_URL. */
  redisUrl?: string;
  databaseUrl?: string;
  /** etcd driver: the members' client URLs without credentials, comma-separated (init writes them sorted). */
  etcdEndpoints?: string;
  /** Git driver: the name of the clone's remote that holds the lock ref (default: remote). A name, never a path or URL. */
  gitRemote?: string;
  /** Git driver: how long one git command may run, in whole seconds (default 5; LOCKSTEP_GIT_TIMEOUT_SECONDS wins). */
  gitTimeoutSeconds?: number;
  /**
   * The repository path of an allowed_signers file on the first protected branch (git, file, SQL, Redis). Set, every
   * step of the page's history must be signed by a key it lists for that step's identity (README "Threat model").
   */
  allowedSigners?: string;
  /**
   * With allowedSigners and openpgpKeys (any driver of a signed page): the repository path of a file on the first
   * protected branch listing `<identity> <primary key fingerprint>` a line; a step signed with git's OpenPGP signing key
   * (a git commit's signature, or a signed chain's gpg signature) is proven by a listed key of its identity
   * (docs/protocol.md "OpenPGP (GPG) signatures").
   */
  openpgpSigners?: string;
  /** With openpgpSigners: the repository path of the listed keys, armored (`gpg --armor --export`). */
  openpgpKeys?: string;
  /** Branches whose landing is fenced (at least one; init writes the remote's default branch). */
  protectedBranches: string[];
  /** The name of the clone's remote that is the register (default origin). */
  remote: string;
  leaseTtlSeconds: number;
  heartbeatSeconds: number;
  windowSeconds: number;
  operators: string[];
  /** For `lockstep verify --merge`: forge login → Lockstep identity (who a request's author is). */
  pushers?: Record<string, string>;
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

/** The published schema (package.json `contributes.jsonValidation`): the editor and every reader check the same rules. */
const CONTAINER_SCHEMA = containerSchema as unknown as SchemaNode;

export function newContainerFile(protectedBranches: string[], operators: string[], overrides: Partial<ContainerFile> = {}): ContainerFile {
  // Through JSON, as it will be written and read: a setting left undefined is left out.
  return checkContainerFile(
    JSON.parse(
      JSON.stringify({
        container: randomUUID(),
        ...CONTAINER_DEFAULTS,
        protectedBranches,
        operators,
        ...overrides,
      }),
    ),
  );
}

/** The largest `.lockstep.json` read (a real one is well under 2 KiB); a larger one is refused before it is read. */
export const MAX_CONTAINER_FILE_BYTES = 64 * 1024;

/**
 * The clone's `.lockstep.json`: a regular file of at most {@link MAX_CONTAINER_FILE_BYTES}, never
 * followed through a symbolic link (one to /dev/zero or a FIFO would hang every command and every
 * push), read in one bounded read.
 */
export function readContainerFile(root: string): ContainerFile {
  const file = path.join(root, CONTAINER_FILE);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LockRefusedError(
        'not-initialised',
        `This repository has no ${CONTAINER_FILE}, so it is not a Lockstep container here. If a teammate` +
          ' has made it one, pull the committed file (`git pull`); otherwise run `lockstep init` and commit .lockstep.json.',
      );
    }
    throw unreadable(error);
  }
  if (!stat.isFile()) throw notRegular(stat.isSymbolicLink());
  if (stat.size > MAX_CONTAINER_FILE_BYTES) throw tooLarge();
  let fd: number | undefined;
  try {
    // O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO since the lstat is refused, not waited on.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    if (!fs.fstatSync(fd).isFile()) throw notRegular(false);
    const buffer = Buffer.alloc(MAX_CONTAINER_FILE_BYTES + 1);
    let length = 0;
    for (let n = -1; length < buffer.length && n !== 0; length += n) n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_CONTAINER_FILE_BYTES) throw tooLarge();
    return parseContainerFile(buffer.toString('utf8', 0, length));
  } catch (error) {
    if (error instanceof LockConfigurationError) throw error;
    throw unreadable(error);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function unreadable(cause: unknown): LockConfigurationError {
  return new LockConfigurationError(`${CONTAINER_FILE} could not be read; check that it is a regular file you may read.`, {
    setting: CONTAINER_FILE,
    cause,
  });
}

function notRegular(link: boolean): LockConfigurationError {
  return new LockConfigurationError(
    `${CONTAINER_FILE} is ${link ? 'a symbolic link' : 'not a regular file'}; Lockstep reads its settings only from a regular file.` +
      ' Restore the committed file (`git checkout -- .lockstep.json`) and commit the settings themselves.',
    { setting: CONTAINER_FILE },
  );
}

function tooLarge(): LockConfigurationError {
  return new LockConfigurationError(
    `${CONTAINER_FILE} is larger than ${MAX_CONTAINER_FILE_BYTES / 1024} KiB, which no container's settings need; restore it from git.`,
    { setting: CONTAINER_FILE },
  );
}

/** Parses and validates the text of a `.lockstep.json` (as committed, e.g. read from a branch). */
export function parseContainerFile(text: string): ContainerFile {
  if (text.length > MAX_CONTAINER_FILE_BYTES) throw tooLarge();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new LockConfigurationError(`${CONTAINER_FILE} is not valid JSON; fix it or restore it from git.`, {
      setting: CONTAINER_FILE,
      cause,
    });
  }
  return checkContainerFile(raw);
}

/**
 * A parsed `.lockstep.json` checked against the published schema (schemas/lockstep.schema.json:
 * unknown or misspelt keys, types, ranges, names that git could read as options) and the one rule
 * the schema cannot say (the heartbeat within half the lease), with the settings it leaves out
 * filled from the defaults.
 */
export function checkContainerFile(raw: unknown): ContainerFile {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new LockConfigurationError(`${CONTAINER_FILE} must hold a JSON object.`, { setting: CONTAINER_FILE });
  }
  if ((raw as { driver?: unknown }).driver === 'auto') {
    bad(
      'driver',
      'is "auto", which is not a container driver: every clone must read the same lock page, and auto may pick another store' +
        ' in another process. Write the driver it stands for: "redis" (with redisUrl and prefix) or "file" (with path);' +
        ' `lockstep init --driver auto` writes it for a new container',
    );
  }
  const violation = checkAgainstSchema(raw, CONTAINER_SCHEMA);
  if (violation) throw schemaError(violation);
  const value = { ...CONTAINER_DEFAULTS, operators: [], ...raw } as unknown as ContainerFile;
  if (value.heartbeatSeconds > value.leaseTtlSeconds / 2) {
    bad('heartbeatSeconds', `must be a number of seconds from 5 to ${value.leaseTtlSeconds / 2} (half of leaseTtlSeconds)`);
  }
  if (
    value.allowedSigners !== undefined &&
    value.driver !== 'git' &&
    value.driver !== 'file' &&
    value.driver !== 'sql' &&
    value.driver !== 'redis' &&
    value.driver !== 'etcd'
  ) {
    bad('allowedSigners', `is read by the git, file, SQL, Redis and etcd drivers, and this container uses the ${value.driver} driver`);
  }
  if ((value.openpgpSigners === undefined) !== (value.openpgpKeys === undefined)) {
    bad(value.openpgpSigners === undefined ? 'openpgpKeys' : 'openpgpSigners', 'is set with openpgpSigners and openpgpKeys together');
  }
  if (value.openpgpSigners !== undefined && value.allowedSigners === undefined) {
    bad('openpgpSigners', 'lists OpenPGP keys of a signed lock page, and allowedSigners (which makes the page signed) is not set');
  }
  return value;
}

export function writeContainerFile(root: string, value: ContainerFile): void {
  fs.writeFileSync(path.join(root, CONTAINER_FILE), `${JSON.stringify(value, null, 2)}\n`);
}

function bad(setting: string, what: string): never {
  throw new LockConfigurationError(`${CONTAINER_FILE}: ${setting} ${what}.`, { setting });
}

/** A violation as the user reads it: the setting, what it must be, and (for a misspelt key) the key meant. Never the value. */
function schemaError(violation: SchemaViolation): LockConfigurationError {
  if (violation.kind === 'unknown-key') {
    // The key is the committed file's text: named only when it looks like a setting's name.
    const key = /^[A-Za-z0-9_$.-]{1,40}$/.test(violation.key) ? violation.key : undefined;
    const meant = key === undefined ? undefined : closest(key, violation.known);
    return new LockConfigurationError(
      `${CONTAINER_FILE}: ${key === undefined ? 'a key' : `"${key}"`} is not a setting Lockstep knows${meant ? ` (did you mean ${meant}?)` : ''}.` +
        ' An unknown key is refused rather than ignored, since a misspelt one would silently change nothing.' +
        ` The settings are ${violation.known.filter(k => k !== '$schema').join(', ')}.`,
      { setting: meant ?? CONTAINER_FILE },
    );
  }
  const setting = violation.kind === 'missing-key' ? violation.key : String(violation.path[0] ?? CONTAINER_FILE);
  if (violation.kind === 'missing-key')
    return new LockConfigurationError(`${CONTAINER_FILE}: ${setting} is missing; it ${violation.message}.`, { setting });
  const entry = violation.path.length > 1 ? ` (entry ${Number(violation.path[1]) + 1})` : '';
  return new LockConfigurationError(`${CONTAINER_FILE}: ${setting}${entry} ${violation.message}.`, { setting });
}

/** The known key nearest to a misspelt one (case, a letter or two), if any is that near. */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 4)) + 1;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (both strings at most 40 characters here). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/**
 * The durations in whole milliseconds: the schema allows fractions of a second, and a grant's TTL
 * must be a whole number of milliseconds (lockRecord.ts), so 60.0001 s is 60,000 ms, not a TTL every
 * acquire refuses.
 */
export function containerSettings(file: ContainerFile): ContainerSettings & { heartbeatMs: number } {
  return {
    leaseTtlMs: Math.round(file.leaseTtlSeconds * SECOND),
    windowMs: Math.round(file.windowSeconds * SECOND),
    heartbeatMs: Math.round(file.heartbeatSeconds * SECOND),
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
    ...(file.etcdEndpoints !== undefined ? { etcdEndpoints: file.etcdEndpoints } : {}),
    gitDir: root,
    gitRemote: file.gitRemote ?? file.remote,
    ...(file.gitTimeoutSeconds !== undefined ? { gitTimeoutMs: file.gitTimeoutSeconds * SECOND } : {}),
    ...(file.allowedSigners !== undefined ? { gitSigning: 'required' as const } : {}),
    ...(file.openpgpSigners !== undefined ? { gitOpenpgp: true } : {}),
  };
}
