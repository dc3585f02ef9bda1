import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFileExclusively, removeOrphanTemps, writeFileAtomically } from '../../src/core/atomicReplace';
import { readSession, writeSession } from '../../src/core/container/session';
import { useTempDir } from '../helpers/tempDir';

/** The pid of a process that has ended (a real `node -e 0`, waited for). */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  assert.equal(child.status, 0);
  return child.pid;
}

const HOUR_AGO = (Date.now() - 3_600_000) / 1000;

describe('atomic writes of a clone’s files (atomicReplace.ts writeFileAtomically, removeOrphanTemps)', () => {
  const tmp = useTempDir('lockstep-atomic-write');

  it('writes the whole text with a private mode, even over a temporary file an earlier process with this pid left open to all', function () {
    if (process.platform === 'win32') this.skip(); // POSIX modes
    const file = path.join(tmp.path, 'session.json');
    fs.writeFileSync(`${file}.${process.pid}.tmp`, 'left over', { mode: 0o666 });
    fs.chmodSync(`${file}.${process.pid}.tmp`, 0o666);
    writeFileAtomically(file, '{"grant":3}', "The clone's session file");
    assert.equal(fs.readFileSync(file, 'utf8'), '{"grant":3}');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(tmp.path), ['session.json']);
  });

  it('a write that fails leaves the old file as it was and no temporary file behind', () => {
    const file = path.join(tmp.path, 'checkpoint');
    fs.mkdirSync(file); // a folder where the file belongs: the rename fails
    fs.writeFileSync(path.join(file, 'inside'), 'x');
    assert.throws(() => writeFileAtomically(file, 'new', 'The checkpoint', { durable: true }));
    assert.deepEqual(fs.readdirSync(tmp.path), ['checkpoint']);
    assert.deepEqual(fs.readdirSync(file), ['inside']);
  });

  it('creates a file only where there is none, also on a file system without hard links, and never replaces one', () => {
    const file = path.join(tmp.path, 'pending.json');
    assert.equal(createFileExclusively(file, 'first'), true);
    assert.equal(createFileExclusively(file, 'second'), false);
    assert.equal(fs.readFileSync(file, 'utf8'), 'first');
    const noLinks = () => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
    };
    const other = path.join(tmp.path, 'other.json');
    assert.equal(createFileExclusively(other, 'first', 0o600, noLinks), true);
    assert.equal(createFileExclusively(other, 'second', 0o600, noLinks), false);
    assert.equal(fs.readFileSync(other, 'utf8'), 'first');
    assert.deepEqual(fs.readdirSync(tmp.path).sort(), ['other.json', 'pending.json'], 'no temporary file left');
  });

  it('removes only the temporary files of writers that are gone and older than a minute', () => {
    const gone = endedPid();
    const names = {
      orphan: `session.json.${gone}.tmp`,
      young: `pending.json.${gone}.tmp`,
      live: `push.config.${process.ppid}.tmp`,
      mine: `grant-x.${process.pid}.tmp`,
      notOurs: 'notes.tmp',
      notAPid: 'session.json.x.tmp',
    };
    for (const name of Object.values(names)) fs.writeFileSync(path.join(tmp.path, name), 'x');
    for (const name of [names.orphan, names.live, names.mine, names.notOurs, names.notAPid])
      fs.utimesSync(path.join(tmp.path, name), HOUR_AGO, HOUR_AGO);
    removeOrphanTemps(tmp.path);
    const left = fs.readdirSync(tmp.path).sort();
    assert.deepEqual(left, [names.mine, names.notAPid, names.notOurs, names.young, names.live].sort());
  });

  it('a session write sweeps the temporary file a killed acquire left in .git/lockstep, and the session reads back whole', () => {
    const gitDir = tmp.path;
    const dir = path.join(gitDir, 'lockstep');
    fs.mkdirSync(dir, { recursive: true });
    const orphan = path.join(dir, `pending.json.${endedPid()}.tmp`);
    fs.writeFileSync(orphan, '{"half":');
    fs.utimesSync(orphan, HOUR_AGO, HOUR_AGO);
    const session = { container: 'c1', grant: 7, token: 'a'.repeat(64), identity: 'alice', acquiredAt: 1 };
    writeSession(gitDir, session);
    assert.equal(fs.existsSync(orphan), false);
    assert.deepEqual(readSession(gitDir, 'c1'), session);
    assert.deepEqual(fs.readdirSync(dir), ['session.json']);
  });
});
