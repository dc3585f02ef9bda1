import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockBackendError } from '../../src/core/errors';
import { ensurePrivateFolder, PRIVATE_MARKER } from '../../src/core/container/privateFolder';
import { openClone, writePushProof } from '../../src/core/container/clone';
import { readSession, sessionDir, writePending, writeSession } from '../../src/core/container/session';
import { execFileSync } from 'node:child_process';

/**
 * Issue #29: Windows ignores the 0700/0600 modes that keep the owner token and push proof private,
 * so on Windows `.git/lockstep/` gets an access list for the user alone, set with icacls. Here a
 * real program named `icacls` on PATH records its arguments (and fails when told to), and the
 * platform is injected as win32; everything else is the real code writing real files.
 */
describe('the clone’s private folder', function () {
  this.timeout(30_000);
  let root: string;
  let log: string;
  let savedPath: string | undefined;
  const token = 'a'.repeat(64);
  const session = { container: 'c0ffee', grant: 3, token, identity: 'alice@example.com', acquiredAt: 1 };

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-private-'));
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    log = path.join(root, 'icacls.log');
    // Records one line per run (its arguments joined by |); exits with the code in ICACLS_EXIT_FILE if present.
    fs.writeFileSync(
      path.join(bin, 'icacls'),
      `#!/bin/sh\nIFS='|'; printf '%s\\n' "$*" >> '${log}'\nif [ -f '${root}/fail' ]; then echo 'The requested operation is not supported on this volume.' >&2; exit 1; fi\nexit 0\n`,
      { mode: 0o755 },
    );
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}${path.delimiter}${savedPath ?? ''}`;
  });
  after(() => {
    process.env.PATH = savedPath;
    fs.rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    fs.rmSync(log, { force: true });
    fs.rmSync(path.join(root, 'fail'), { force: true });
  });

  const runs = (): string[][] =>
    fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map(l => l.split('|'))
      : [];
  const freshGitDir = (name: string): string => {
    const gitDir = path.join(root, name, '.git');
    fs.mkdirSync(gitDir, { recursive: true });
    return gitDir;
  };

  /** Runs `body` with process.platform reading win32 and the user's name set as Windows sets it. */
  function asWindows<T>(body: () => T): T {
    const platform = Object.getOwnPropertyDescriptor(process, 'platform');
    const saved = { USERNAME: process.env.USERNAME, USERDOMAIN: process.env.USERDOMAIN };
    Object.defineProperty(process, 'platform', { value: 'win32', configurable: true });
    process.env.USERNAME = 'alice';
    process.env.USERDOMAIN = 'TEAM';
    try {
      return body();
    } finally {
      if (platform) Object.defineProperty(process, 'platform', platform);
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it('on Windows: the folder gets an access list for the user alone, inherited by its files, once', () => {
    const dir = sessionDir(freshGitDir('once'));
    const io = { platform: 'win32' as const, env: { USERNAME: 'alice', USERDOMAIN: 'TEAM' } };
    ensurePrivateFolder(dir, io);
    assert.deepEqual(runs(), [[dir, '/inheritance:r', '/grant:r', 'TEAM\\alice:(OI)(CI)F']]);
    assert.ok(fs.existsSync(path.join(dir, PRIVATE_MARKER)));
    ensurePrivateFolder(dir, io);
    assert.equal(runs().length, 1, 'a folder already limited is not set again');
  });

  it('on Windows: the session and the pending acquire are written only into the limited folder', () => {
    const gitDir = freshGitDir('session');
    asWindows(() => {
      writePending(gitDir, session);
      writeSession(gitDir, session);
    });
    assert.deepEqual(runs(), [[sessionDir(gitDir), '/inheritance:r', '/grant:r', 'TEAM\\alice:(OI)(CI)F']]);
    assert.equal(readSession(gitDir, 'c0ffee')?.token, token);
  });

  it('on Windows: the push proof is written only into the limited folder', async () => {
    const repo = path.join(root, 'proof');
    execFileSync('git', ['init', '-q', repo]);
    const clone = await openClone(repo);
    // The folder is limited before the first await: the platform is read there.
    const writing = asWindows(() => writePushProof(clone, 3, 'b'.repeat(64), 'origin'));
    await writing;
    assert.deepEqual(runs(), [[sessionDir(clone.gitDir), '/inheritance:r', '/grant:r', 'TEAM\\alice:(OI)(CI)F']]);
    assert.ok(fs.existsSync(path.join(sessionDir(clone.gitDir), 'push.config')));
  });

  it('on Windows: where icacls cannot limit the folder (a FAT volume), no token is written and the error says what to do', () => {
    const gitDir = freshGitDir('fat');
    fs.writeFileSync(path.join(root, 'fail'), '');
    const error = asWindows(() => {
      try {
        writeSession(gitDir, session);
      } catch (e) {
        return e;
      }
      return undefined;
    });
    assert.ok(error instanceof LockBackendError, String(error));
    assert.match(error.message, /could not be limited to you with icacls \(exit 1: The requested operation is not supported/);
    assert.match(error.message, /NTFS/);
    assert.doesNotMatch(error.message, new RegExp(token));
    assert.equal(fs.readdirSync(sessionDir(gitDir)).filter(f => !f.startsWith('.')).length, 0, 'no session file');
    assert.equal(fs.existsSync(path.join(sessionDir(gitDir), PRIVATE_MARKER)), false, 'the next write tries again');
  });

  it('on Windows: without a user name the folder is not given to anybody and nothing is written', () => {
    const dir = sessionDir(freshGitDir('nobody'));
    assert.throws(
      () => ensurePrivateFolder(dir, { platform: 'win32', env: {} }),
      (e: unknown) => e instanceof LockBackendError && /USERNAME is not set/.test(e.message),
    );
    assert.deepEqual(runs(), []);
  });

  it('on Linux and macOS: modes do the work (folder 0700, session 0600), icacls is never run', () => {
    const gitDir = freshGitDir('posix');
    writeSession(gitDir, session);
    assert.deepEqual(runs(), []);
    assert.equal(fs.statSync(sessionDir(gitDir)).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(sessionDir(gitDir), 'session.json')).mode & 0o777, 0o600);
  });
});
