import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockFileInUseError, REPLACE_PAUSES_MS, replaceAtomically, type ReplaceIo } from '../../src/core/atomicReplace';
import { LockBackendError } from '../../src/core/errors';

/** Real files and a real rename; only the other program holding the file open is played: the first `failures` renames fail with `code`. */
function heldOpen(platform: NodeJS.Platform, failures: number, code = 'EPERM'): ReplaceIo & { readonly pauses: number[]; tries: number } {
  const pauses: number[] = [];
  const io = {
    platform,
    pauses,
    tries: 0,
    rename(from: string, to: string) {
      io.tries++;
      if (io.tries <= failures) throw Object.assign(new Error(`${code}: operation not permitted, rename '${from}' -> '${to}'`), { code });
      fs.renameSync(from, to);
    },
    sleep: (ms: number) => void pauses.push(ms),
    discard: (file: string) => fs.rmSync(file, { force: true }),
  };
  return io;
}

describe('atomic replace (atomicReplace.ts)', () => {
  let dir: string;
  let temp: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-replace-'));
    temp = path.join(dir, '.session-1.tmp');
    file = path.join(dir, 'session.json');
    fs.writeFileSync(file, 'old');
    fs.writeFileSync(temp, 'new');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('on Windows: a rename refused twice with EPERM (an indexer holds the file) is retried after short pauses and lands', () => {
    const io = heldOpen('win32', 2);
    replaceAtomically(temp, file, "The clone's session file", io);
    assert.equal(fs.readFileSync(file, 'utf8'), 'new');
    assert.equal(io.tries, 3);
    assert.deepEqual(io.pauses, REPLACE_PAUSES_MS.slice(0, 2));
    assert.ok(!fs.existsSync(temp));
  });

  for (const code of ['EBUSY', 'EACCES']) {
    it(`on Windows: ${code} is retried the same way`, () => {
      const io = heldOpen('win32', 1, code);
      replaceAtomically(temp, file, "The clone's session file", io);
      assert.equal(fs.readFileSync(file, 'utf8'), 'new');
    });
  }

  it('on Windows: a file held open through every try raises a typed error that says what to do, keeps the old file and removes the temporary one', () => {
    const io = heldOpen('win32', Number.POSITIVE_INFINITY);
    assert.throws(
      () => replaceAtomically(temp, file, "The clone's session file (.git/lockstep/session.json)", io),
      (error: unknown) => {
        assert.ok(error instanceof LockFileInUseError);
        assert.ok(error instanceof LockBackendError, 'exit 4, like any backend that is not there for now');
        assert.equal(error.retryable, true);
        assert.match(
          error.message,
          /^The clone's session file \(\.git\/lockstep\/session\.json\) could not be replaced: another program kept it open through 8 tries over about a second .* Exclude the folder from that program, or close it, then run the command again\.$/,
        );
        assert.ok(!String((error.cause as Error).message).includes(dir), 'the cause names no path');
        return true;
      },
    );
    assert.equal(io.tries, REPLACE_PAUSES_MS.length + 1);
    assert.ok(io.pauses.reduce((a, b) => a + b, 0) <= 1_100, 'bounded: about a second in all');
    assert.equal(fs.readFileSync(file, 'utf8'), 'old');
    assert.ok(!fs.existsSync(temp));
  });

  it('on Linux and macOS: EPERM is a real refusal and is raised at once, unchanged', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      const io = heldOpen(platform, 1);
      assert.throws(() => replaceAtomically(temp, file, 'x', io), { code: 'EPERM' });
      assert.equal(io.tries, 1);
      assert.deepEqual(io.pauses, []);
    }
  });

  it('any other failure (ENOENT) is raised at once on every platform', () => {
    const io = heldOpen('win32', 1, 'ENOENT');
    assert.throws(() => replaceAtomically(temp, file, 'x', io), { code: 'ENOENT' });
    assert.equal(io.tries, 1);
  });
});
