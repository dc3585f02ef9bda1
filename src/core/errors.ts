/**
 * Lockstep's typed errors. Every error a caller can see derives from {@link LockError}, carries a
 * string `code` that reads well in logs and JSON, and says what was wrong and what to do.
 *
 * Hygiene rule (docs/leases.md#errors): no message or field ever contains a lock name, an owner token, a raw
 * backend key or a credential. Callers pass only safe evidence (counts, bounds, grant numbers,
 * identities of people, setting names).
 */

export enum LockErrorCode {
  /** Invalid name, TTL, wait, setting or driver. Exit code 2. */
  Configuration = 'configuration',
  /** The backend is unreachable, timed out, or is not migrated. Exit code 4. Retryable. */
  Backend = 'backend',
  /**
   * A stored record is damaged, or the container's page is not there (LockNoPageError: the store
   * holds none, or the settings point at another page than the committed one), or a signed page's
   * history holds a step that is not proven (LockTamperedPageError); never read as free.
   * Exit code 5.
   */
  Storage = 'storage',
  /** Another live owner holds the lease this handle tried to release. Exit code 1. */
  Ownership = 'ownership',
  /** The lease stayed busy for the whole wait. Exit code 3. */
  Busy = 'busy',
  /** A fencing check failed: the grant presented is not the current one. Exit code 1. */
  Fenced = 'fenced',
  /** A protocol rule refused the request (not holder, not allowed, not pushed, ...). Exit code 1. */
  Refused = 'refused',
  /** A heartbeat found the lease expired or superseded. Exit code 1. */
  LeaseLost = 'lease-lost',
}

export interface LockErrorOptions {
  cause?: unknown;
  /** True when trying again later may succeed (outages, timeouts). */
  retryable?: boolean;
}

export class LockError extends Error {
  readonly code: LockErrorCode;
  readonly retryable: boolean;

  constructor(code: LockErrorCode, message: string, options: LockErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LockError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

export class LockConfigurationError extends LockError {
  /** The setting or argument that was wrong, e.g. `ttl` or `LOCKSTEP_DRIVER`. */
  readonly setting: string | undefined;
  constructor(message: string, options: LockErrorOptions & { setting?: string } = {}) {
    super(LockErrorCode.Configuration, message, options);
    this.name = 'LockConfigurationError';
    this.setting = options.setting;
  }
}

/**
 * The clone holds a grant (or has an acquire in flight) on another lock page than the one the checked-out
 * `.lockstep.json` names: a branch whose settings point elsewhere (whoever pushed the branch chose them).
 * Nothing is read or written there while the session lasts: a read of that page would settle the session
 * against a page its writes never went to, a write would heartbeat a copy while the real lease runs out.
 */
export class LockOtherPageError extends LockConfigurationError {
  constructor(held: { readonly grant: number; readonly page: string; readonly pending: boolean }, checkedOut: string) {
    super(
      `This clone ${held.pending ? `has an acquire of grant #${held.grant} in flight` : `holds grant #${held.grant}`} on another lock page (${held.page})` +
        ` than the one the checked-out .lockstep.json names (${checkedOut}). A branch's .lockstep.json says whatever its last pusher wrote;` +
        ' check out the branch your grant was taken on (the default branch) to see the lock, heartbeat or release it. Nothing was read or written.',
      { setting: '.lockstep.json' },
    );
    this.name = 'LockOtherPageError';
  }
}

export class LockBackendError extends LockError {
  /** The driver that failed, e.g. `redis`. */
  readonly driver: string;
  constructor(driver: string, message: string, options: LockErrorOptions = {}) {
    super(LockErrorCode.Backend, message, { retryable: true, ...options });
    this.name = 'LockBackendError';
    this.driver = driver;
  }
}

/**
 * The store answered a write with a refusal that holds (a server hook declined it, with its reason): the write's
 * outcome is known — it did not happen — and running it again gets the same answer. Still exit 4 (the store
 * would not take it); never "not known yet".
 */
export class LockWriteDeclinedError extends LockBackendError {
  constructor(backend: string, message: string, options: LockErrorOptions = {}) {
    super(backend, message, { ...options, retryable: false });
    this.name = 'LockWriteDeclinedError';
  }
}

/**
 * A write (a grant, a fencing token, a record change) reached the Redis master but fewer replicas
 * than required acknowledged it in time (`WAIT`), so a failover could lose it: the operation is
 * reported failed. Exit code 4 like any backend error; JSON `reason: "replication"`.
 */
export class LockReplicationError extends LockBackendError {
  readonly reason = 'replication' as const;
  constructor(
    driver: string,
    readonly acknowledged: number,
    readonly required: number,
    message: string,
    options: LockErrorOptions = {},
  ) {
    super(driver, message, options);
    this.name = 'LockReplicationError';
  }
}

/**
 * A TLS handshake with the store failed on trust: the server's certificate is not signed by an authority this
 * client trusts (or names another host, or has expired), or the server refused this client's certificate.
 * Not retryable: the same settings fail the same way. Exit code 4; JSON `reason: "tls"`, `side` says whose
 * certificate was refused. The message names the setting to change, never a file's contents or an address.
 */
export class LockTlsError extends LockBackendError {
  readonly reason = 'tls' as const;
  constructor(
    driver: string,
    /** `server`: this client did not trust the server's certificate; `client`: the server refused this client's. */
    readonly side: 'server' | 'client',
    message: string,
    options: LockErrorOptions = {},
  ) {
    super(driver, message, { ...options, retryable: false });
    this.name = 'LockTlsError';
  }
}

export class LockStorageError extends LockError {
  readonly driver: string;
  constructor(driver: string, message: string, options: LockErrorOptions = {}) {
    super(LockErrorCode.Storage, message, options);
    this.name = 'LockStorageError';
    this.driver = driver;
  }
}

/** Which lock page a command read: safe to print (no credentials, no raw keys). */
export interface PageLocation {
  readonly driver: string;
  /** The store's location without credentials: a folder, a URL without user or password, a git remote. */
  readonly location: string;
  readonly prefix: string;
  readonly container: string;
}

/** How a page location reads in a sentence: "file driver at /srv/locks, prefix team". */
export function describePage(page: Omit<PageLocation, 'container'>): string {
  return `${page.driver} driver at ${page.location}, prefix ${page.prefix}`;
}

/**
 * The store holds no lock page for the container, or this process was pointed at another page than
 * the committed one. Never read as a free lock (seed 001: one lock page per container): a clone
 * pointed at another store, prefix or driver would otherwise issue its own grant #1, and an `adopt`
 * there would create a second page. Exit code 5, like a damaged record; JSON `reason: "no-page"`.
 */
export class LockNoPageError extends LockStorageError {
  readonly reason = 'no-page' as const;
  /** The page this process looked for (or, on a mismatch, was pointed at). */
  readonly page: PageLocation;
  /** Where `.lockstep.json` says the page is, when it says (undefined in stores opened without it). */
  readonly committed: Omit<PageLocation, 'container'> | undefined;
  /**
   * The settings (`LOCKSTEP_*` variables, editor settings) that point away from the committed page;
   * empty when the committed store itself was read and held no page. Nothing was opened when not empty.
   */
  readonly mismatch: readonly string[];
  constructor(
    page: PageLocation,
    committed: Omit<PageLocation, 'container'> | undefined,
    options: LockErrorOptions & { mismatch?: readonly string[] } = {},
  ) {
    const mismatch = options.mismatch ?? [];
    super(
      page.driver,
      mismatch.length > 0 && committed !== undefined ? mismatchMessage(page, committed, mismatch) : noPageMessage(page, committed),
      options,
    );
    this.name = 'LockNoPageError';
    this.page = page;
    this.committed = committed;
    this.mismatch = mismatch;
  }
}

function noPageMessage(page: PageLocation, committed: Omit<PageLocation, 'container'> | undefined): string {
  const said = committed === undefined ? '' : `; the committed settings say ${describePage(committed)}`;
  const where = `This store (${describePage(page)}) holds no lock page for container ${page.container.slice(0, 8)}…${said}`;
  if (page.driver === 'memory') {
    return (
      `${where}. The memory driver keeps a page only inside the process that made it, and each lockstep command is a process of its own:` +
      ' a container needs a store other processes and clones read. Commit another driver in .lockstep.json (file, sql, redis, etcd or git).'
    );
  }
  return (
    `${where} — check ${PAGE_VARIABLES[page.driver] ?? 'LOCKSTEP_DRIVER'}.` +
    ' A new container gets its page from `lockstep init`; an operator recreates a lost one with `lockstep adopt`.'
  );
}

/** The settings that choose which page a driver reads, as the no-page message names them (pageSettings.ts pointingAway names the same). */
const PAGE_VARIABLES: Readonly<Record<string, string>> = {
  file: 'LOCKSTEP_PATH / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER',
  redis: 'LOCKSTEP_REDIS_URL / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER',
  sql: 'LOCKSTEP_DATABASE_URL (without one, LOCKSTEP_PATH: the SQLite file is there) / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER',
  etcd: 'LOCKSTEP_ETCD_ENDPOINTS / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER',
  git: "LOCKSTEP_GIT_REMOTE / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER, and that the remote still has the page's lock ref (refs/lockstep/…)",
};

function mismatchMessage(page: PageLocation, committed: Omit<PageLocation, 'container'>, mismatch: readonly string[]): string {
  const names = mismatch.join(' and ');
  return (
    `${names} point${mismatch.length === 1 ? 's' : ''} at another lock page (${describePage(page)}) than the one .lockstep.json commits for` +
    ` container ${page.container.slice(0, 8)}… (${describePage(committed)}). Which page a container uses is committed; the environment` +
    ` supplies only credentials and machine-local details. Unset ${names} (or make ${mismatch.length === 1 ? 'it' : 'them'} match .lockstep.json)` +
    ' and run the command again; nothing was read or written.'
  );
}

/**
 * The lock page's history holds a step that is not proven (docs in README "Threat model"): a
 * commit that is unsigned, signed by a key the allowed signers list does not give its audit line's
 * identity, not a legal transition of the record before it, or a history that rewinds past what
 * this clone verified. Never read as a free lock, never its forged holder. Exit code 5, like a
 * damaged record; JSON `reason: "tampered"`. The repair is an operator's signed `lockstep adopt`.
 */
export class LockTamperedPageError extends LockStorageError {
  readonly reason = 'tampered' as const;
  /** The offending commit (full SHA): safe to print, it names no lock and no token. */
  readonly revision: string;
  /** What is wrong with it, one sentence naming no secret. */
  readonly why: string;
  constructor(driver: string, revision: string, why: string, options: LockErrorOptions & { readonly message?: string } = {}) {
    super(
      driver,
      options.message ??
        `The lock page is tampered: its history step ${revision.slice(0, 12)} is not proven — ${why}` +
          ' No one is read as its holder. An operator repairs it with a signed `lockstep adopt` (lockstep doctor shows the signing set-up).',
      options,
    );
    this.name = 'LockTamperedPageError';
    this.revision = revision;
    this.why = why;
  }
}

/**
 * The page reads an older grant than this clone has already seen on it (grantWatermark.ts): it was set back — an old
 * backup of the store restored, a lock ref moved back on the remote — and read as it is it would call a lock free that
 * is held, and issue a grant a second time. A tampered page (JSON `reason: "tampered"`, exit 5): no one is read as
 * its holder until an operator repairs it.
 */
export class LockRewoundPageError extends LockTamperedPageError {
  /** The grant the page reads. */
  readonly grant: number;
  /** The highest grant this clone saw on it before. */
  readonly seen: number;
  constructor(driver: string, revision: string, grant: number, seen: number) {
    const why = `the page reads grant #${grant}, but this clone has already seen grant #${seen} on it: it was set back (an old copy of the store restored, or the lock ref moved back).`;
    super(driver, revision, why, {
      message:
        `The lock page was set back: ${why} No one is read as its holder, so no grant is issued twice.` +
        ` An operator repairs it: remove the set-back page from the store and run \`lockstep adopt --grant ${seen}\` or higher (README: damaged records).`,
    });
    this.name = 'LockRewoundPageError';
    this.grant = grant;
    this.seen = seen;
  }
}

/**
 * A page that names another holder for this clone's own grant. The page named this clone's token for that
 * grant when its session began, and grants are never issued twice, so the page was rewritten: by hand, or by
 * an adopt below this grant from a clone that had not seen it. Read as a tampered page, as a set-back one is.
 */
export class LockRegrantedPageError extends LockTamperedPageError {
  /** This clone's grant, which the page gives to another holder. */
  readonly grant: number;
  constructor(driver: string, revision: string, grant: number) {
    const why = `the page gives grant #${grant}, which this clone holds, to another holder; a grant is never issued twice, so the page was rewritten (by hand, or by an adopt below #${grant}).`;
    super(driver, revision, why, {
      message:
        `The lock page was rewritten: ${why} No one is read as its holder.` +
        ` An operator repairs it: remove the page from the store and run \`lockstep adopt --grant ${grant}\` or higher (README: damaged records).`,
    });
    this.name = 'LockRegrantedPageError';
    this.grant = grant;
  }
}

export class LockOwnershipError extends LockError {
  constructor(message: string, options: LockErrorOptions = {}) {
    super(LockErrorCode.Ownership, message, options);
    this.name = 'LockOwnershipError';
  }
}

export class LockBusyError extends LockError {
  /** How long the caller waited, in seconds. */
  readonly waitedSeconds: number;
  constructor(message: string, waitedSeconds: number, options: LockErrorOptions = {}) {
    super(LockErrorCode.Busy, message, { retryable: true, ...options });
    this.name = 'LockBusyError';
    this.waitedSeconds = waitedSeconds;
  }
}

export class LockFencedError extends LockError {
  readonly presentedGrant: number | undefined;
  readonly currentGrant: number;
  constructor(message: string, currentGrant: number, presentedGrant?: number, options: LockErrorOptions = {}) {
    super(LockErrorCode.Fenced, message, options);
    this.name = 'LockFencedError';
    this.currentGrant = currentGrant;
    this.presentedGrant = presentedGrant;
  }
}

/** Refusal reasons of the container protocol, stable strings for JSON output. */
export type RefusalReason =
  | 'held-by-other'
  | 'not-holder'
  | 'not-your-turn'
  | 'already-holder'
  | 'already-queued'
  | 'not-queued'
  | 'holder-cannot-petition'
  | 'not-operator'
  | 'not-silent'
  | 'reason-required'
  | 'not-landed'
  | 'no-range'
  | 'range-exhausted'
  | 'invalid-request'
  | 'not-initialised'
  | 'new-identity'
  | 'proof-would-leak';

export class LockRefusedError extends LockError {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason, message: string, options: LockErrorOptions = {}) {
    super(LockErrorCode.Refused, message, options);
    this.name = 'LockRefusedError';
    this.reason = reason;
  }
}

export class LockLeaseLostError extends LockError {
  readonly grant: number | undefined;
  constructor(message: string, grant?: number, options: LockErrorOptions = {}) {
    super(LockErrorCode.LeaseLost, message, options);
    this.name = 'LockLeaseLostError';
    this.grant = grant;
  }
}

/** The command line's exit code for an error (docs/leases.md#errors). */
export function exitCodeFor(error: unknown): number {
  if (!(error instanceof LockError)) return 1;
  switch (error.code) {
    case LockErrorCode.Configuration:
      return 2;
    case LockErrorCode.Busy:
      return 3;
    case LockErrorCode.Backend:
      return 4;
    case LockErrorCode.Storage:
      return 5;
    default:
      return 1;
  }
}
