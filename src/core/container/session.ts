import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFileExclusively, removeOrphanTemps, writeFileAtomically } from '../atomicReplace';
import { LockOtherPageError } from '../errors';
import { ensurePrivateFolder } from './privateFolder';

/**
 * The clone's local session: the owner token of the grant it acquired, kept in
 * `.git/lockstep/session.json` (folder 0700, file 0600; on Windows the folder's access list limited
 * to the user: privateFolder.ts). It is never printed or logged.
 *
 * Beside it, `pending.json` holds the token of an acquire whose write was sent but whose outcome
 * is not known yet (a timeout, a kill, a dropped connection): written before the compare-and-swap,
 * it is how the next command in the clone finds out whether the page names this token, and then
 * finishes the acquire, or discards it once the page shows that grant went to someone else.
 */
export interface Session {
  readonly container: string;
  readonly grant: number;
  readonly token: string;
  readonly identity: string;
  readonly acquiredAt: number;
  /** The protected branch's commit when the grant began (a release's landing check); `fresh` when the remote itself said so. */
  readonly base?: { readonly commit: string; readonly fresh: boolean };
  /**
   * The lock page the grant was taken on (errors.ts describePage, with the container): a checkout whose
   * `.lockstep.json` names another page is refused while the session lasts (LockOtherPageError). Absent in
   * the files of earlier versions.
   */
  readonly page?: string;
}

const SESSION = 'session.json';
const PENDING = 'pending.json';

export function sessionDir(gitDir: string): string {
  return path.join(gitDir, 'lockstep');
}

export function readSession(gitDir: string, container: string, page?: string): Session | undefined {
  return onThisPage(readTokenFile(gitDir, SESSION, undefined), container, page, false);
}

/** Written atomically so that a crash leaves the old session or the new one, never half of one. */
export function writeSession(gitDir: string, session: Session): void {
  writeTokenFile(gitDir, SESSION, session);
}

export function clearSession(gitDir: string): void {
  fs.rmSync(path.join(sessionDir(gitDir), SESSION), { force: true });
}

const RELEASED = 'released.json';

/**
 * The grant whose release a read of the page found landed after its answer was lost (and finished by
 * removing the session), kept until the clone's next session: `release` run again then answers that it
 * landed (`already`), whichever command finished it. Holds no secret.
 */
export function writeReleased(gitDir: string, container: string, grant: number): void {
  try {
    writeFileAtomically(path.join(sessionDir(gitDir), RELEASED), JSON.stringify({ container, grant }), "The clone's finished release");
  } catch {
    // only the answer of a release run again is lost: it then says the clone holds nothing
  }
}

export function readReleased(gitDir: string, container: string): number | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(path.join(sessionDir(gitDir), RELEASED), 'utf8')) as { container?: unknown; grant?: unknown };
    return value.container === container && Number.isSafeInteger(value.grant) ? (value.grant as number) : undefined;
  } catch {
    return undefined;
  }
}

export function clearReleased(gitDir: string): void {
  fs.rmSync(path.join(sessionDir(gitDir), RELEASED), { force: true });
}

/** The acquire in flight or interrupted: `grant` is the grant its last write asked for. */
export function readPending(gitDir: string, container: string, page?: string): Session | undefined {
  return onThisPage(readTokenFile(gitDir, PENDING, undefined), container, page, true);
}

/**
 * The session (or pending acquire) of this container's page; another container's is none. One taken on
 * another page than `page` (the checked-out settings') is refused: its writes went there, not here.
 */
function onThisPage(s: Session | undefined, container: string, page: string | undefined, pending: boolean): Session | undefined {
  if (s === undefined) return undefined;
  if (s.page !== undefined && page !== undefined && (s.page !== page || s.container !== container)) {
    throw new LockOtherPageError(
      { grant: s.grant, page: `${s.page}, container ${s.container.slice(0, 8)}…`, pending },
      `${page}, container ${container.slice(0, 8)}…`,
    );
  }
  return s.container === container ? s : undefined;
}

export function writePending(gitDir: string, pending: Session): void {
  writeTokenFile(gitDir, PENDING, pending);
}

/**
 * Writes `pending.json` only where there is none: false when another process of the clone wrote one first
 * (its acquire is in flight, and its token must not be overwritten: a write of it may land).
 */
export function createPending(gitDir: string, pending: Session): boolean {
  const dir = sessionDir(gitDir);
  ensurePrivateFolder(dir);
  return createFileExclusively(path.join(dir, PENDING), JSON.stringify(pending));
}

/**
 * Removes the pending acquire, only if it is still the one the caller judged (another process of the
 * clone may have started a new attempt meanwhile: its file stays).
 */
export function clearPending(gitDir: string, judged: Pick<Session, 'token' | 'grant'>): void {
  const file = path.join(sessionDir(gitDir), PENDING);
  const now = readTokenFile(gitDir, PENDING, undefined);
  if (now !== undefined && (now.token !== judged.token || now.grant !== judged.grant)) return;
  fs.rmSync(file, { force: true });
}

function readTokenFile(gitDir: string, name: string, container: string | undefined): Session | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(sessionDir(gitDir), name), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const s = JSON.parse(text) as Session;
    if ((container !== undefined && s.container !== container) || !Number.isSafeInteger(s.grant) || !/^[0-9a-f]{64}$/.test(s.token))
      return undefined;
    return s;
  } catch {
    return undefined; // a damaged session is no session: the clone simply does not hold the lock
  }
}

function writeTokenFile(gitDir: string, name: string, value: Session): void {
  const dir = sessionDir(gitDir);
  ensurePrivateFolder(dir);
  removeOrphanTemps(dir);
  // Durable: the owner token is nowhere else, and a grant whose token is lost serves no clone.
  writeFileAtomically(
    path.join(dir, name),
    JSON.stringify(value),
    `The clone's ${name === SESSION ? 'session' : 'pending acquire'} file (.git/lockstep/${name})`,
    { durable: true },
  );
}
