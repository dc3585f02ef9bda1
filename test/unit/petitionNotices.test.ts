import * as assert from 'node:assert/strict';
import type { LockRecord } from '../../src/core/lockRecord';
import { petitionMessage, petitionsToTell } from '../../src/core/petitionNotices';
import { heldPage, statusOf } from '../helpers/lockRecordFixture';

/** Which petitions the holder hears of, once each, and in which words. Pure: statuses in, notices out. */
describe('petition notices for the holder', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const record = (queue: LockRecord['queue']): LockRecord => heldPage('alice@x.io', now, queue);
  const as = (identity: string, r: LockRecord, holding?: boolean) => statusOf(r, identity, now, holding);

  it('tells the holder of each petition once, then of a new one only; a renewed petition is new', () => {
    const told = new Set<string>();
    const bob = { identity: 'bob@x.io', at: now - 5_000, note: 'the parser' };
    const first = petitionsToTell(as('alice@x.io', record([bob]), true), told);
    assert.deepEqual(
      first.map(n => [n.petition.identity, n.waiting]),
      [['bob@x.io', 1]],
    );
    for (const n of first) told.add(n.key);
    assert.deepEqual(petitionsToTell(as('alice@x.io', record([bob]), true), told), []);
    const carol = { identity: 'carol@x.io', at: now - 1_000 };
    assert.deepEqual(
      petitionsToTell(as('alice@x.io', record([bob, carol]), true), told).map(n => [n.petition.identity, n.waiting]),
      [['carol@x.io', 2]],
    );
    const renewed = { ...bob, at: now };
    assert.deepEqual(
      petitionsToTell(as('alice@x.io', record([renewed]), true), told).map(n => n.petition.identity),
      ['bob@x.io'],
    );
  });

  it('tells nobody but the holder: not another member, not a clone without the session', () => {
    const r = record([{ identity: 'bob@x.io', at: now }]);
    assert.deepEqual(petitionsToTell(as('carol@x.io', r), new Set()), []);
    assert.deepEqual(petitionsToTell(as('alice@x.io', r, false), new Set()), []);
    assert.deepEqual(petitionsToTell(undefined, new Set()), []);
  });

  it('says who, the note (controls escaped), how many wait, and what to do', () => {
    const [one] = petitionsToTell(as('alice@x.io', record([{ identity: 'bob@x.io', at: now, note: 'the \u202eparser' }]), true), new Set());
    assert.equal(
      petitionMessage(one!),
      'Lockstep: bob@x.io petitioned for the lock: "the \\u202eparser". Push and release when your work is in, and the queue moves on.',
    );
    const two = petitionsToTell(
      as(
        'alice@x.io',
        record([
          { identity: 'bob@x.io', at: now },
          { identity: 'carol@x.io', at: now },
        ]),
        true,
      ),
      new Set(),
    );
    assert.equal(
      petitionMessage(two[1]!),
      'Lockstep: carol@x.io petitioned for the lock. 2 are waiting. Push and release when your work is in, and the queue moves on.',
    );
  });
});
