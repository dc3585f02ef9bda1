import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../src/core/clock';
import type { Clone } from '../../src/core/container/clone';
import type { ContainerFile } from '../../src/core/container/containerFile';
import { readPending } from '../../src/core/container/session';
import { SessionChoreography } from '../../src/core/container/sessionChoreography';
import { LockBusyError } from '../../src/core/errors';
import type { ContainerSettings } from '../../src/core/lockRecord';
import { useTempDir } from '../helpers/tempDir';

/**
 * Two acquires of one clone begun at once (two terminals, a terminal and the editor): each read the page
 * before either wrote, so each made a token of its own. Before the fix, the second to write replaced the
 * first's token in pending.json; the first's write landed, its command was killed, and the grant's token
 * was in no file: a grant no clone could use. Now pending.json is created only where there is none, and the
 * second acquire stops before its write leaves. Real files in a real .git/lockstep.
 */
describe('pending.json keeps the token of the acquire that wrote it first (sessionChoreography.ts PendingAcquire.ask)', () => {
  const tmp = useTempDir('lockstep-pending');
  const CONTAINER = '4dc0c1a1-9676-4f5b-918f-0950690b76ca';
  const PAGE = 'file driver at /srv/locks, prefix lockstep';
  const choreography = () =>
    new SessionChoreography(
      { gitDir: tmp.path } as unknown as Clone,
      { container: CONTAINER } as unknown as ContainerFile,
      {} as ContainerSettings,
      'alice@example.com',
      new ManualClock(0),
      PAGE,
    );

  it("the second acquire to ask is refused as busy before it writes; the first's token stays, and its own later asks go on", () => {
    const first = choreography().beginAcquire('a'.repeat(64), undefined);
    const second = choreography().beginAcquire('b'.repeat(64), undefined);
    first.ask(1);
    assert.throws(
      () => second.ask(1),
      (error: unknown) => error instanceof LockBusyError && /Another acquire of this clone is in flight/.test(error.message),
    );
    assert.equal(second.sent, false, 'the refused acquire sent nothing');
    assert.equal(readPending(tmp.path, CONTAINER, PAGE)?.token, 'a'.repeat(64));
    first.ask(2); // lost a race: its next write asks for the next grant, with its own token
    assert.deepEqual([readPending(tmp.path, CONTAINER, PAGE)?.token, readPending(tmp.path, CONTAINER, PAGE)?.grant], ['a'.repeat(64), 2]);
    second.drop(); // its command ends: the file it never wrote is not its to remove
    assert.equal(readPending(tmp.path, CONTAINER, PAGE)?.token, 'a'.repeat(64));
    assert.deepEqual(fs.readdirSync(path.join(tmp.path, 'lockstep')), ['pending.json']);
  });

  it('an acquire that reuses the token of an interrupted one (read when it began) asks on with it', () => {
    choreography().beginAcquire('c'.repeat(64), undefined).ask(1);
    const retry = choreography().beginAcquire('c'.repeat(64), undefined);
    retry.ask(1);
    assert.equal(retry.sent, true);
    assert.equal(readPending(tmp.path, CONTAINER, PAGE)?.token, 'c'.repeat(64));
  });
});
