import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockBackendError } from '../errors';

/**
 * The clone's `.git/lockstep/` folder holds the owner token and the push proof: bearer secrets of
 * one grant. On POSIX systems the folder is created 0700 and its files 0600. Windows ignores those
 * modes, so a file there takes the access list of the folder it is in, inherited from wherever the
 * clone lives (`C:\work\` may be readable by every local user). On Windows the folder's access list
 * is therefore replaced, once, by one entry giving the signed-in user full control, inherited by
 * every file made in it later: `icacls DIR /inheritance:r /grant:r DOMAIN\USER:(OI)(CI)F`, the
 * platform's own tool (no library sets Windows ACLs without a native addon). A marker file records
 * that it was done, so later writes cost one `stat`. Where icacls cannot do it (a FAT or exFAT
 * volume, a missing user name), nothing secret is written: the command stops and says so.
 */

/** The marker of a folder whose access list Lockstep limited (Windows only). */
export const PRIVATE_MARKER = '.private-acl';

export interface PrivateFolderIo {
  readonly platform: NodeJS.Platform;
  readonly env: NodeJS.ProcessEnv;
}

const processIo = (): PrivateFolderIo => ({ platform: process.platform, env: process.env });

/** Makes `dir` (and its parents) if needed and keeps it readable by the current user only. */
export function ensurePrivateFolder(dir: string, io: PrivateFolderIo = processIo()): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (io.platform !== 'win32') return;
  const marker = path.join(dir, PRIVATE_MARKER);
  if (fs.existsSync(marker)) return;
  const user = windowsUser(io.env);
  if (user === undefined) {
    throw new LockBackendError(
      'local',
      "The clone's private folder (.git/lockstep) could not be limited to you: USERNAME is not set, so there is no user to give it to. " +
        'Run the command from your own sign-in session (USERNAME and USERDOMAIN set), then try again.',
    );
  }
  const ran = spawnSync('icacls', [dir, '/inheritance:r', '/grant:r', `${user}:(OI)(CI)F`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
    timeout: 30_000,
  });
  if (ran.status !== 0) {
    const said = `${ran.stderr ?? ''}\n${ran.stdout ?? ''}`.split(/\r?\n/).find(line => line.trim() !== '');
    const why = ran.error !== undefined ? (ran.error as NodeJS.ErrnoException).code : `exit ${ran.status ?? ran.signal}`;
    throw new LockBackendError(
      'local',
      `The clone's private folder (.git/lockstep) could not be limited to you with icacls (${why}${said !== undefined ? `: ${said.trim().slice(0, 200)}` : ''}). ` +
        "Lockstep keeps the lock's owner token and push proof there and writes neither into a folder other users may read. " +
        'Keep the clone on an NTFS volume (FAT and exFAT have no access lists), check that icacls runs, then try again.',
    );
  }
  fs.writeFileSync(marker, '');
}

/** `DOMAIN\user` as icacls resolves it; the user alone when no domain is set. */
function windowsUser(env: NodeJS.ProcessEnv): string | undefined {
  const user = env.USERNAME?.trim();
  if (!user) return undefined;
  const domain = env.USERDOMAIN?.trim();
  return domain ? `${domain}\\${user}` : user;
}
