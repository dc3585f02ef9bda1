import * as path from 'node:path';
import { digestOf } from '../chain/signedChain';
import { SECOND } from '../clock';
import type { LockManagerOptions } from '../config';
import containerSchema from '../../../schemas/lockstep.schema.json';
import { checkContainerFile, containerSettings, driverOptions, parseContainerFile, type ContainerFile } from '../container/containerFile';
import { LockConfigurationError } from '../errors';
import { checkAgainstSchema, type SchemaNode } from '../jsonSchemaCheck';
import type { ContainerSettings } from '../lockRecord';
import { DEFAULT_SKEW_MS } from '../chain/recordUpdate';
import { etcdEndpointsWithoutCredentials } from '../stores/etcd/etcdEndpoints';

/**
 * What the server's guard decides with, pinned beside the hook by `lockstep hooks install --server`
 * (file `lockstep-server.json`, mode 0600). Nothing in a pushed commit and nothing in the pusher's
 * environment changes it: the guard decides with no `.lockstep.json` from a branch and no `LOCKSTEP_*`
 * variable. Changing it means running the install again on the server (guard/pinnedDrift.ts warns
 * until then).
 */
export const SERVER_SETTINGS_FILE = 'lockstep-server.json';

/** Variables a git server that authenticates pushers sets for its hooks. */
export const PUSHER_VARIABLES = ['REMOTE_USER', 'GL_USERNAME', 'GL_USER', 'GITEA_PUSHER_EMAIL'] as const;
export type PusherVariable = (typeof PUSHER_VARIABLES)[number];

export interface ServerSettings {
  readonly v: 1;
  /** The container's committed settings, as they were on `pinnedFrom` at install time. */
  readonly file: ContainerFile;
  readonly pinnedFrom: { readonly branch: string; readonly commit: string };
  /** Protected pushes must prove the live grant (the committed `serverGuard`, unless overridden). */
  readonly requireProof: boolean;
  /**
   * Details only the server has: the file driver's folder, URLs with credentials, etcd's members with
   * theirs and its TLS files (absolute paths: the guard runs in the repository, not where it was installed).
   */
  readonly store: ServerStore;
  readonly skewSeconds: number;
  /** When the server authenticates pushers: which variable names them, and who they are in Lockstep. */
  readonly pushers?: { readonly variable: PusherVariable; readonly identities: Readonly<Record<string, string>> };
}

export interface ServerStore {
  readonly path?: string;
  readonly redisUrl?: string;
  readonly databaseUrl?: string;
  readonly etcdEndpoints?: string;
  readonly etcdCaFile?: string;
  readonly etcdCertFile?: string;
  readonly etcdKeyFile?: string;
}

/** The keys of {@link ServerStore}, each pinned as the option of the same name. */
const SERVER_STORE_KEYS = ['path', 'redisUrl', 'databaseUrl', 'etcdEndpoints', 'etcdCaFile', 'etcdCertFile', 'etcdKeyFile'] as const;

export function newServerSettings(
  fileText: string,
  pinnedFrom: ServerSettings['pinnedFrom'],
  options: {
    requireProof?: boolean;
    store?: ServerSettings['store'];
    skewSeconds?: number;
    pushers?: ServerSettings['pushers'];
  } = {},
): ServerSettings {
  const file = parseContainerFile(fileText);
  return validateServerSettings({
    v: 1,
    file,
    pinnedFrom,
    requireProof: options.requireProof ?? file.serverGuard,
    store: options.store ?? {},
    skewSeconds: options.skewSeconds ?? DEFAULT_SKEW_MS / SECOND,
    ...(options.pushers ? { pushers: options.pushers } : {}),
  });
}

/** The largest pinned settings file read (one holds a container file and a map of pushers). */
export const MAX_SERVER_SETTINGS_BYTES = 256 * 1024;

/** Reads the pinned file's text; anything unreadable is a configuration error (the guard then refuses). */
export function parseServerSettings(text: string): ServerSettings {
  if (text.length > MAX_SERVER_SETTINGS_BYTES) {
    throw new LockConfigurationError(
      `${SERVER_SETTINGS_FILE} is larger than ${MAX_SERVER_SETTINGS_BYTES / 1024} KiB; run lockstep hooks install --server again.`,
      { setting: SERVER_SETTINGS_FILE },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new LockConfigurationError(`${SERVER_SETTINGS_FILE} is not valid JSON; run lockstep hooks install --server again.`, {
      setting: SERVER_SETTINGS_FILE,
      cause,
    });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new LockConfigurationError(`${SERVER_SETTINGS_FILE} must hold a JSON object; run lockstep hooks install --server again.`, {
      setting: SERVER_SETTINGS_FILE,
    });
  }
  const value = raw as ServerSettings;
  let file: ContainerFile;
  try {
    file = checkContainerFile(value.file ?? null);
  } catch (error) {
    const why = error instanceof LockConfigurationError ? error.message : 'unreadable';
    throw new LockConfigurationError(
      `The server guard's pinned container settings are not valid (${why}); fix .lockstep.json on the pinned branch, then run lockstep hooks install --server again.`,
      { setting: SERVER_SETTINGS_FILE, cause: error },
    );
  }
  return validateServerSettings({ ...value, file });
}

const BRANCH = containerSchema.properties.protectedBranches.items as SchemaNode;
const IDENTITY = containerSchema.properties.operators.items as SchemaNode;
/** A URL or path the server keeps (credentials allowed: the file is mode 0600); never option-shaped, no control characters. */
const STORE_TEXT: SchemaNode = { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[^\\-\\s][^\\u0000-\\u001f\\u007f]*$' };

/**
 * The pinned file's own keys, as strict as `.lockstep.json`'s (whose schema checks `file`): an
 * unknown key, a wrong type or an option-shaped value refuses every push until the install runs again.
 */
const SERVER_SETTINGS_SCHEMA: SchemaNode = {
  type: 'object',
  required: ['v', 'file', 'pinnedFrom', 'requireProof', 'store', 'skewSeconds'],
  additionalProperties: false,
  properties: {
    v: { enum: [1], errorMessage: 'must be 1 (a newer Lockstep wrote it)' },
    file: { type: 'object' },
    pinnedFrom: {
      type: 'object',
      required: ['branch', 'commit'],
      additionalProperties: false,
      properties: {
        branch: BRANCH,
        commit: { type: 'string', pattern: '^(?:[0-9a-f]{40}|[0-9a-f]{64})$', errorMessage: 'must be a commit id' },
      },
    },
    requireProof: { type: 'boolean' },
    store: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(SERVER_STORE_KEYS.map(key => [key, STORE_TEXT])),
    },
    skewSeconds: { type: 'number', minimum: 0, maximum: 3600, errorMessage: 'must be 0 to 3600' },
    pushers: {
      type: 'object',
      required: ['variable', 'identities'],
      additionalProperties: false,
      properties: {
        variable: { enum: [...PUSHER_VARIABLES], errorMessage: `must be one of ${PUSHER_VARIABLES.join(', ')}` },
        identities: { type: 'object', additionalProperties: IDENTITY },
      },
    },
  },
};

function validateServerSettings(value: ServerSettings): ServerSettings {
  const violation = checkAgainstSchema({ ...value, file: {} }, SERVER_SETTINGS_SCHEMA);
  if (violation) {
    const where =
      violation.kind === 'invalid'
        ? `${violation.path.join('.')} ${violation.message}`
        : violation.kind === 'missing-key'
          ? `${[...violation.path, violation.key].join('.')} is missing`
          : `an unknown key${/^[A-Za-z0-9_$.-]{1,40}$/.test(violation.key) ? ` "${violation.key}"` : ''}${violation.path.length ? ` in ${violation.path.join('.')}` : ''}`;
    throw new LockConfigurationError(`The server guard's settings are not valid (${where}); run lockstep hooks install --server again.`, {
      setting: SERVER_SETTINGS_FILE,
    });
  }
  return value;
}

export function serverContainerSettings(settings: ServerSettings): ContainerSettings {
  return containerSettings(settings.file);
}

/**
 * The store options of the guard: the committed driver and prefix, the server's own folder and
 * credentials, and for the git driver the repository itself ('.': the refs in place).
 */
export function serverDriverOptions(settings: ServerSettings, repo: string): LockManagerOptions {
  return {
    ...driverOptions(settings.file, repo),
    ...Object.fromEntries(SERVER_STORE_KEYS.flatMap(key => (settings.store[key] !== undefined ? [[key, settings.store[key]]] : []))),
    gitDir: repo,
    gitRemote: '.',
  };
}

/**
 * Where the server guard keeps its witness of a signed page on a participants' store (file, SQL,
 * Redis): the last page it proved, in the guarded repository, so that a step dropped from the store
 * since it last looked reads tampered. Readers in the repository (`status`, `audit`) start from it too.
 */
export function guardWitnessFile(repo: string, container: string): string {
  return path.join(repo, 'lockstep', `witness-${digestOf(container).slice(0, 32)}`);
}

/**
 * Who pushes, as the server knows it: undefined when the pinned settings name no pusher variable
 * (identities are then declared by the clients), else the mapped identity or why there is none.
 */
export function pusherIdentity(
  settings: ServerSettings,
  env: Readonly<Record<string, string | undefined>>,
): { readonly identity: string | undefined } | { readonly refusal: string } {
  if (settings.pushers === undefined) return { identity: undefined };
  const user = env[settings.pushers.variable]?.trim();
  if (!user)
    return { refusal: `the server did not say who pushes (${settings.pushers.variable} is empty), and the lock record needs to know.` };
  const identity = Object.hasOwn(settings.pushers.identities, user) ? settings.pushers.identities[user] : undefined;
  if (identity === undefined) {
    return {
      refusal: `the server user ${user.slice(0, 100)} has no Lockstep identity; an administrator adds one with lockstep hooks install --server --pusher ${user.slice(0, 100)}=EMAIL.`,
    };
  }
  return { identity };
}

/** The pinned settings as lines for `hooks status --server`: no password, no token. */
export function describeServerSettings(settings: ServerSettings): string[] {
  const f = settings.file;
  const store = [
    `driver ${f.driver}`,
    ...(f.prefix !== undefined ? [`prefix ${f.prefix}`] : []),
    ...((settings.store.path ?? f.path) ? [`path ${settings.store.path ?? f.path}`] : []),
    ...((settings.store.redisUrl ?? f.redisUrl) ? [`redis ${withoutCredentials(settings.store.redisUrl ?? f.redisUrl ?? '')}`] : []),
    ...((settings.store.databaseUrl ?? f.databaseUrl)
      ? [`database ${withoutCredentials(settings.store.databaseUrl ?? f.databaseUrl ?? '')}`]
      : []),
    ...((settings.store.etcdEndpoints ?? f.etcdEndpoints)
      ? [`etcd ${etcdEndpointsWithoutCredentials(settings.store.etcdEndpoints ?? f.etcdEndpoints ?? '')}`]
      : []),
    // The TLS files by name only, as doctor names them: a folder of the server says nothing a reader needs.
    ...(['etcdCaFile', 'etcdCertFile', 'etcdKeyFile'] as const).flatMap(key =>
      settings.store[key] !== undefined ? [`${key} ${path.basename(settings.store[key])}`] : [],
    ),
  ];
  return [
    `container ${f.container}`,
    `pinned from ${settings.pinnedFrom.branch} at ${settings.pinnedFrom.commit.slice(0, 12)}`,
    `protected branches: ${f.protectedBranches.join(', ') || '(none)'}`,
    `proof of the live grant required: ${settings.requireProof ? 'yes' : 'no (only lock-record transitions are checked)'}`,
    `store: ${store.join(', ')}`,
    `operators: ${f.operators.join(', ') || '(none)'}`,
    `clock skew allowed: ${settings.skewSeconds} s`,
    settings.pushers
      ? `pushers: named by ${settings.pushers.variable}; ${Object.keys(settings.pushers.identities).length} mapped`
      : 'pushers: not authenticated by the server (identities are declared by clients)',
  ];
}

/** A URL with any user name and password replaced by `***`. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}
