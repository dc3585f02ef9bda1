import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GrantWatermark } from '../../src/core/container/grantWatermark';
import { LockRewoundPageError, LockTamperedPageError } from '../../src/core/errors';
import { useTempDir } from '../helpers/tempDir';

/** The highest grant a clone has read on its page, kept on disk between commands (real files). */
describe('the highest grant a clone has seen (a page set back reads as such)', () => {
  const tmp = useTempDir('lockstep-watermark');
  const rewound = (grant: number, seen: number) => (error: unknown) => {
    assert.ok(error instanceof LockRewoundPageError && error instanceof LockTamperedPageError, String(error));
    assert.deepEqual([error.grant, error.seen, error.reason], [grant, seen, 'tampered']);
    assert.match(error.message, new RegExp(`reads grant #${grant}, but this clone has already seen grant #${seen}`));
    return true;
  };

  it('rises with the page, never falls, and refuses a page below it in a later command too', () => {
    const file = path.join(tmp.path, 'lockstep', 'grant-a');
    const first = new GrantWatermark(file);
    first.check('file', '3:abc', 3);
    first.check('file', '4:abc', 5);
    first.check('file', '5:abc', 5);
    assert.equal(fs.readFileSync(file, 'utf8'), '5\n');
    assert.throws(() => first.check('file', '2:abc', 4), rewound(4, 5));
    const later = new GrantWatermark(file);
    assert.throws(() => later.check('file', '2:abc', 0), rewound(0, 5));
    assert.equal(fs.readFileSync(file, 'utf8'), '5\n', 'a refused page leaves the mark as it was');
  });

  it("counts the clone's own session grant, with or without a file", () => {
    const mark = new GrantWatermark(path.join(tmp.path, 'none', 'grant-b'));
    assert.throws(() => mark.check('git', 'c0ffee', 6, 7), rewound(6, 7));
    assert.equal(mark.seen(9), 9);
  });

  it('a garbled file counts as none, and an unwritable folder only leaves the check to the session', () => {
    const garbled = path.join(tmp.path, 'grant-c');
    fs.writeFileSync(garbled, 'not a grant\n');
    new GrantWatermark(garbled).check('file', '1:x', 1);
    assert.equal(fs.readFileSync(garbled, 'utf8'), '1\n');
    const blocked = path.join(tmp.path, 'a-file');
    fs.writeFileSync(blocked, '');
    const unwritable = new GrantWatermark(path.join(blocked, 'grant-d'));
    unwritable.check('file', '1:x', 4);
    assert.equal(new GrantWatermark(path.join(blocked, 'grant-d')).seen(), 0);
  });
});
