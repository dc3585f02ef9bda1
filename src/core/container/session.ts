import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The clone's local session: the owner token of the grant it acquired, kept in
 * `.git/lockstep/session.json` (folder 0700, file 0600). It is never printed or logged.
 */
export interface Session {
  readonly container: string;
  readonly grant: number;
  readonly token: string;
  readonly identity: string;
  readonly acquiredAt: number;
}

export function sessionDir(gitDir: string): string {
  return path.join(gitDir, 'lockstep');
}

export function readSession(gitDir: string, container: string): Session | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(sessionDir(gitDir), 'session.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const s = JSON.parse(text) as Session;
    if (s.container !== container || !Number.isSafeInteger(s.grant) || !/^[0-9a-f]{64}$/.test(s.token)) return undefined;
    return s;
  } catch {
    return undefined; // a damaged session is no session: the clone simply does not hold the lock
  }
}

/** Written atomically so that a crash leaves the old session or the new one, never half of one. */
export function writeSession(gitDir: string, session: Session): void {
  const dir = sessionDir(gitDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.session-${process.pid}.tmp`);
  fs.writeFileSync(temp, JSON.stringify(session), { mode: 0o600 });
  fs.renameSync(temp, path.join(dir, 'session.json'));
}

export function clearSession(gitDir: string): void {
  fs.rmSync(path.join(sessionDir(gitDir), 'session.json'), { force: true });
}
