import type { LockManagerOptions } from '../core/application';

/** `lockstep.*` settings, read at the edge and handed to core as plain options. */
export interface ExtensionSettings {
  /** Overrides `git config user.email` (LOCKSTEP_IDENTITY still wins). */
  readonly identity: string | undefined;
  readonly acquireOnEdit: boolean;
  readonly showBadge: boolean;
  readonly logLevel: LogLevelSetting;
  /** Poll interval for drivers that cannot push changes (seconds). */
  readonly pollSeconds: number;
  /** Driver options between the environment and `.lockstep.json`. */
  readonly store: LockManagerOptions;
  /** `warn` (one warning per session) or `readOnly` (editors of the container's files are read-only). */
  readonly whileLockedByOthers: 'warn' | 'readOnly';
  /** Globs (relative to the workspace folder) of files that stay writable under `readOnly`. */
  readonly readOnlyExclude: readonly string[];
  /** Tell the holder of each new petition with a notification (the badge counts them either way). */
  readonly notifyPetitions: boolean;
}

export type LogLevelSetting = 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LOG_LEVELS: readonly LogLevelSetting[] = ['error', 'warn', 'info', 'debug', 'trace'];

/** package.json `contributes.configuration`'s `lockstep.pollSeconds` bounds (docs/inputs.md). */
export const POLL_SECONDS = { min: 1, max: 600, default: 10 } as const;

/**
 * The settings from the raw values VS Code hands over (`read(key)`: undefined when unset). VS Code
 * flags a value outside package.json's schema in settings.json but still hands it over, so each one
 * is checked here: a value of the wrong type or outside the bounds is never used as it is — a number
 * is brought inside its bounds, anything else falls back to the default (docs/inputs.md).
 */
export function settingsFrom(read: (key: string) => unknown): ExtensionSettings {
  const identity = text(read('identity'));
  const storePath = text(read('store.path'));
  return {
    identity: identity === '' ? undefined : identity,
    acquireOnEdit: flag(read('acquireOnEdit'), true),
    showBadge: flag(read('showBadge'), true),
    logLevel: LOG_LEVELS.find(level => level === read('logLevel')) ?? 'info',
    pollSeconds: pollSecondsFrom(read('pollSeconds')),
    store: storePath === '' ? {} : { path: storePath },
    whileLockedByOthers: read('whileLockedByOthers') === 'readOnly' ? 'readOnly' : 'warn',
    readOnlyExclude: globs(read('readOnlyExclude')),
    notifyPetitions: flag(read('notifyPetitions'), true),
  };
}

/** `lockstep.pollSeconds`: 1 to 600 seconds; below or above is the nearest bound, not a number the default 10. */
export function pollSecondsFrom(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return POLL_SECONDS.default;
  return Math.min(POLL_SECONDS.max, Math.max(POLL_SECONDS.min, value));
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function flag(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function globs(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string' && g.trim() !== '') : [];
}
