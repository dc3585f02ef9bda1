import * as os from 'node:os';
import * as path from 'node:path';
import { LockConfigurationError } from './errors';
import { assertValidPrefix } from './names';
import { inspectAs, inspectCustom, redactUrl } from './redact';

/** The stores a container can keep its page and leases in; each is a driver in `stores/` (drivers.ts opens them). */
export type DriverName = 'memory' | 'file' | 'redis' | 'git' | 'sql' | 'etcd';
export type DriverSetting = DriverName | 'auto';
export const DRIVER_SETTINGS: readonly DriverSetting[] = ['memory', 'file', 'sql', 'redis', 'etcd', 'git', 'auto'];

/** Options a program passes to `createLockManager`; every field is optional. */
export interface LockManagerOptions {
  driver?: DriverSetting;
  /** Namespace shared by the processes meant to coordinate. */
  prefix?: string;
  /** Absolute folder of the file driver (and of SQLite's default database). */
  path?: string;
  redisUrl?: string;
  /**
   * Redis replicas that must acknowledge (`WAIT`) each grant, fencing-counter increment and record
   * write before it is reported done. Default: 1 for Sentinel and Cluster, 0 for one server.
   */
  redisMinReplicas?: number;
  databaseUrl?: string;
  /** etcd driver: the members' client URLs, comma-separated (a user and password may be written into them). */
  etcdEndpoints?: string;
  /**
   * etcd driver over `https://`: a PEM file of the certificate authority (or authorities) that signed the members'
   * certificates, trusted instead of the system's; and, for etcd's client-certificate authentication, this client's
   * certificate and private key (PEM files, both or neither). Paths; the files' contents are never printed.
   */
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  /** Reject drivers that cannot coordinate across machines (memory, file, auto, SQLite). */
  requireDistributed?: boolean;
  /** Connect and per-command timeouts of network backends, separate from the contention wait. */
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Git driver: the repository whose remote holds the lock ref, and that remote's name. */
  gitDir?: string;
  gitRemote?: string;
  /** Git driver: how long one git command (a push of the record) may run before it is stopped. Default: commandTimeoutMs. */
  gitTimeoutMs?: number;
  /**
   * Git driver: `required` (the container's `.lockstep.json` names allowedSigners) makes every record
   * commit signed with the user's git signing key, and refuses to write without one; `auto` (default)
   * signs when git has a signing key configured (user.signingkey).
   */
  gitSigning?: 'required' | 'auto';
  /** With `required` (any driver of a signed page): an OpenPGP signing key signs too (the container lists openpgpSigners); otherwise SSH only. */
  gitOpenpgp?: boolean;
}

export interface ResolvedConfig {
  readonly driver: DriverSetting;
  readonly prefix: string;
  /** True when the prefix was set explicitly (distributed backends require it). */
  readonly prefixExplicit: boolean;
  readonly path: string;
  readonly redisUrl: string | undefined;
  /** Undefined: the deployment's default (1 for Sentinel and Cluster, 0 for one server). */
  readonly redisMinReplicas: number | undefined;
  readonly databaseUrl: string | undefined;
  /** etcd driver: LOCKSTEP_ETCD_ENDPOINTS or the etcdEndpoints option (may hold a password: never printed). */
  readonly etcdEndpoints: string | undefined;
  /** etcd driver: LOCKSTEP_ETCD_CA_FILE / LOCKSTEP_ETCD_CERT_FILE / LOCKSTEP_ETCD_KEY_FILE or the matching options (paths). */
  readonly etcdCaFile: string | undefined;
  readonly etcdCertFile: string | undefined;
  readonly etcdKeyFile: string | undefined;
  readonly requireDistributed: boolean;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly gitDir: string | undefined;
  readonly gitRemote: string;
  /** Git driver: per-command timeout (LOCKSTEP_GIT_TIMEOUT_SECONDS > gitTimeoutMs > commandTimeoutMs). */
  readonly gitTimeoutMs: number;
  /** Git driver: sign record commits always (`required`) or when a signing key is configured (`auto`). */
  readonly gitSigning: 'required' | 'auto';
  /** Whether a required signature may be OpenPGP (openpgpSigners in `.lockstep.json`; the git driver and the signed chain alike). */
  readonly gitOpenpgp: boolean;
}

/**
 * One folder, one spelling: `/srv/locks/` is the committed `/srv/locks`, not another page (pageSettings.ts compares
 * locations as text). Only trailing separators go, never the root's own.
 */
function withoutTrailingSeparators(folder: string): string {
  const trailing = path.sep === '\\' ? /[\\/]$/ : /\/$/;
  let trimmed = folder;
  while (trimmed.length > path.parse(trimmed).root.length && trailing.test(trimmed)) trimmed = trimmed.slice(0, -1);
  return trimmed;
}

export const DEFAULT_PREFIX = 'lockstep';
/** The Redis server used when no URL is configured. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

export function defaultStorePath(): string {
  return path.join(os.homedir(), '.lockstep', 'store');
}

type Env = Readonly<Record<string, string | undefined>>;

/** Environment (`LOCKSTEP_*`) overrides options, options override defaults. Opens nothing. */
export function resolveConfig(options: LockManagerOptions = {}, env: Env = process.env): ResolvedConfig {
  const driver = pick(env.LOCKSTEP_DRIVER, options.driver, 'file');
  if (!DRIVER_SETTINGS.includes(driver as DriverSetting)) {
    throw new LockConfigurationError(
      `The driver must be one of ${DRIVER_SETTINGS.join(', ')}; check LOCKSTEP_DRIVER or the driver setting.`,
      { setting: env.LOCKSTEP_DRIVER !== undefined ? 'LOCKSTEP_DRIVER' : 'driver' },
    );
  }

  const prefixSource = env.LOCKSTEP_PREFIX !== undefined ? 'LOCKSTEP_PREFIX' : 'prefix';
  const explicitPrefix = env.LOCKSTEP_PREFIX ?? options.prefix;
  const prefix = explicitPrefix ?? DEFAULT_PREFIX;
  assertValidPrefix(prefix, prefixSource);

  const givenPath = pick(env.LOCKSTEP_PATH, options.path, defaultStorePath());
  if (!path.isAbsolute(givenPath)) {
    throw new LockConfigurationError('The storage path must be absolute; check LOCKSTEP_PATH or the path setting.', {
      setting: env.LOCKSTEP_PATH !== undefined ? 'LOCKSTEP_PATH' : 'path',
    });
  }
  const storePath = withoutTrailingSeparators(givenPath);

  const requireDistributed =
    env.LOCKSTEP_REQUIRE_DISTRIBUTED !== undefined
      ? parseBoolean(env.LOCKSTEP_REQUIRE_DISTRIBUTED, 'LOCKSTEP_REQUIRE_DISTRIBUTED')
      : (options.requireDistributed ?? false);
  if (requireDistributed && (driver === 'memory' || driver === 'file' || driver === 'auto')) {
    throw new LockConfigurationError(
      `requireDistributed is set, but the ${driver} driver coordinates only one machine; choose redis, etcd, sql (MySQL or PostgreSQL) or git.`,
      { setting: 'requireDistributed' },
    );
  }

  return new Settings({
    driver: driver as DriverSetting,
    prefix,
    prefixExplicit: explicitPrefix !== undefined,
    path: storePath,
    // An empty variable is an unset one, as for every other setting (a CI secret that is missing expands to '').
    redisUrl: pick(env.LOCKSTEP_REDIS_URL, options.redisUrl, '') || undefined,
    redisMinReplicas: minReplicas(env.LOCKSTEP_REDIS_MIN_REPLICAS, options.redisMinReplicas),
    databaseUrl: pick(env.LOCKSTEP_DATABASE_URL, options.databaseUrl, '') || undefined,
    etcdEndpoints: pick(env.LOCKSTEP_ETCD_ENDPOINTS, options.etcdEndpoints, '') || undefined,
    etcdCaFile: pick(env.LOCKSTEP_ETCD_CA_FILE, options.etcdCaFile, '') || undefined,
    etcdCertFile: pick(env.LOCKSTEP_ETCD_CERT_FILE, options.etcdCertFile, '') || undefined,
    etcdKeyFile: pick(env.LOCKSTEP_ETCD_KEY_FILE, options.etcdKeyFile, '') || undefined,
    requireDistributed,
    connectTimeoutMs: positive(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 'connectTimeoutMs'),
    commandTimeoutMs: positive(options.commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs'),
    gitDir: options.gitDir,
    gitRemote: pick(env.LOCKSTEP_GIT_REMOTE, options.gitRemote, 'origin'),
    gitTimeoutMs: gitTimeout(env.LOCKSTEP_GIT_TIMEOUT_SECONDS, options.gitTimeoutMs, options.commandTimeoutMs),
    gitSigning: options.gitSigning === 'required' ? 'required' : 'auto',
    gitOpenpgp: options.gitOpenpgp === true,
  });
}

/**
 * Resolved settings that print no credential: the URLs (which may carry a password) are getters
 * over private fields, so a spread or `Object.entries` leaves them out, and `JSON.stringify` and
 * `util.inspect` show them with the password replaced by `***`.
 */
class Settings implements ResolvedConfig {
  readonly driver: DriverSetting;
  readonly prefix: string;
  readonly prefixExplicit: boolean;
  readonly path: string;
  readonly #redisUrl: string | undefined;
  readonly redisMinReplicas: number | undefined;
  readonly #databaseUrl: string | undefined;
  readonly #etcdEndpoints: string | undefined;
  readonly etcdCaFile: string | undefined;
  readonly etcdCertFile: string | undefined;
  readonly etcdKeyFile: string | undefined;
  readonly requireDistributed: boolean;
  readonly connectTimeoutMs: number;
  readonly commandTimeoutMs: number;
  readonly gitDir: string | undefined;
  readonly gitRemote: string;
  readonly gitTimeoutMs: number;
  readonly gitSigning: 'required' | 'auto';
  readonly gitOpenpgp: boolean;

  constructor(fields: ResolvedConfig) {
    this.driver = fields.driver;
    this.prefix = fields.prefix;
    this.prefixExplicit = fields.prefixExplicit;
    this.path = fields.path;
    this.#redisUrl = fields.redisUrl;
    this.redisMinReplicas = fields.redisMinReplicas;
    this.#databaseUrl = fields.databaseUrl;
    this.#etcdEndpoints = fields.etcdEndpoints;
    this.etcdCaFile = fields.etcdCaFile;
    this.etcdCertFile = fields.etcdCertFile;
    this.etcdKeyFile = fields.etcdKeyFile;
    this.requireDistributed = fields.requireDistributed;
    this.connectTimeoutMs = fields.connectTimeoutMs;
    this.commandTimeoutMs = fields.commandTimeoutMs;
    this.gitDir = fields.gitDir;
    this.gitRemote = fields.gitRemote;
    this.gitTimeoutMs = fields.gitTimeoutMs;
    this.gitSigning = fields.gitSigning;
    this.gitOpenpgp = fields.gitOpenpgp;
  }

  get redisUrl(): string | undefined {
    return this.#redisUrl;
  }
  get databaseUrl(): string | undefined {
    return this.#databaseUrl;
  }
  get etcdEndpoints(): string | undefined {
    return this.#etcdEndpoints;
  }

  toJSON(): object {
    return {
      ...this,
      redisUrl: redactUrl(this.#redisUrl),
      databaseUrl: redactUrl(this.#databaseUrl),
      etcdEndpoints: this.#etcdEndpoints
        ?.split(',')
        .map(url => redactUrl(url.trim()))
        .join(','),
    };
  }

  [inspectCustom](depth: number, options: object): string {
    return inspectAs('ResolvedConfig', this.toJSON(), depth, options);
  }
}

function pick(fromEnv: string | undefined, fromOptions: string | undefined, fallback: string): string {
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return fromOptions ?? fallback;
}

export function parseBoolean(text: string, setting: string): boolean {
  const t = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(t)) return false;
  throw new LockConfigurationError(`${setting} must be true or false.`, { setting });
}

/** A count of replicas, from LOCKSTEP_REDIS_MIN_REPLICAS (wins) or the redisMinReplicas option. */
function minReplicas(fromEnv: string | undefined, fromOptions: number | undefined): number | undefined {
  const setting = fromEnv !== undefined && fromEnv !== '' ? 'LOCKSTEP_REDIS_MIN_REPLICAS' : 'redisMinReplicas';
  const value = setting === 'LOCKSTEP_REDIS_MIN_REPLICAS' ? (/^\s*\d+\s*$/.test(fromEnv!) ? Number(fromEnv) : NaN) : fromOptions;
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0 || value > 100) {
    throw new LockConfigurationError(`${setting} must be a whole number of replicas from 0 to 100.`, { setting });
  }
  return value;
}

/** The longest git command timeout a setting may ask for (10 minutes). */
export const MAX_GIT_TIMEOUT_SECONDS = 600;

/** LOCKSTEP_GIT_TIMEOUT_SECONDS (whole seconds, 1–600) wins over the gitTimeoutMs option, then commandTimeoutMs. */
function gitTimeout(fromEnv: string | undefined, fromOptions: number | undefined, commandTimeoutMs: number | undefined): number {
  if (fromEnv !== undefined && fromEnv !== '') {
    const seconds = /^\s*\d+\s*$/.test(fromEnv) ? Number(fromEnv) : NaN;
    if (!(seconds >= 1 && seconds <= MAX_GIT_TIMEOUT_SECONDS)) {
      throw new LockConfigurationError(
        `LOCKSTEP_GIT_TIMEOUT_SECONDS must be a whole number of seconds from 1 to ${MAX_GIT_TIMEOUT_SECONDS}.`,
        { setting: 'LOCKSTEP_GIT_TIMEOUT_SECONDS' },
      );
    }
    return seconds * 1000;
  }
  return positive(fromOptions, positive(commandTimeoutMs, DEFAULT_COMMAND_TIMEOUT_MS, 'commandTimeoutMs'), 'gitTimeoutMs');
}

function positive(value: number | undefined, fallback: number, setting: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new LockConfigurationError(`${setting} must be a positive number of milliseconds.`, { setting });
  }
  return value;
}
