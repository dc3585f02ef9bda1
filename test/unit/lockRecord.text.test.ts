import * as assert from 'node:assert/strict';
import { checkRecordUpdate, DEFAULT_SKEW_MS } from '../../src/core/chain/recordUpdate';
import {
  acquire,
  adoptPage,
  assign,
  auditRefusedPush,
  clear,
  createPage,
  leaseIds,
  petition,
  type LockRecord,
} from '../../src/core/lockRecord';
import { escapeControls, hasControls } from '../../src/core/safeText';
import {
  ANA,
  CONTAINER,
  LEAD,
  OP,
  SETTINGS,
  T0,
  acquireAs,
  at,
  fresh,
  hex,
  lastAudit,
  ok,
  refusedWith,
} from '../helpers/lockRecordFixture';

/**
 * Item 10 of issue #24: C0 and C1 controls (U+009B, a C1 CSI, starts a terminal escape sequence) and
 * the bidirectional controls (U+202E reverses the lock page's queue line) never reach the page in
 * anything a person types: notes, reasons, block texts, refused pushes' details; an identity that
 * holds one is refused. Readers escape the ones an older client stored.
 */

const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
const C1 = ['\u0080', '\u0085', '\u009b', '\u009f'];
const EVERY = [...BIDI, ...C1, '\u0000', '\u001b', '\u007f'];
const dirty = (text: string) => EVERY.map(c => `${c}${text}`).join('');

/** LEAD acquired at hour 0 (2 h lease) and went silent. */
const silent = (): LockRecord => acquireAs(fresh(), LEAD, T0).record;

describe('lockRecord: no control or bidi character is stored in what people type', () => {
  it('a note: every C0, C1 and bidi control is folded to a space', () => {
    const { record } = ok(petition(silent(), { identity: ANA, note: `ship \u202eit\u202c now \u009b31m ${dirty('x')}` }, at(0, 1)));
    const note = record.queue[0].note!;
    assert.equal(hasControls(note), false, JSON.stringify(note));
    assert.ok(note.startsWith('ship it now 31m x'), note);
    assert.equal(lastAudit(record).detail, note, 'the audit line holds the same clean note');
  });

  it("a clear's reason, a refused clear's reason and a block's text", () => {
    const cleared = ok(clear(silent(), SETTINGS, { identity: OP, reason: `gone\u202e${dirty('!')}` }, at(3))).record;
    assert.equal(hasControls(lastAudit(cleared).detail!), false);
    const attempt = clear(silent(), SETTINGS, { identity: ANA, reason: `me\u009b2J` }, at(3));
    assert.ok(!attempt.ok && attempt.record);
    assert.equal(lastAudit(attempt.record).detail, 'me 2J');
    const held = acquireAs(fresh(), LEAD, T0);
    const { record } = ok(assign(held.record, held.proof, { newIdentity: true, to: ANA, text: `tables\u2067 ${dirty('y')}` }, at(0, 1)));
    assert.equal(hasControls(record.blocks[0].text), false);
    assert.equal(hasControls(lastAudit(record).detail!), false);
  });

  it("a refused push's detail and the pusher's name", () => {
    const outcome = auditRefusedPush(silent(), { identity: `eve\u202e@example.com`, grant: 1, detail: `push\u009b refused` }, at(0, 1));
    assert.ok(!outcome.ok && outcome.record);
    assert.deepEqual([lastAudit(outcome.record).who, lastAudit(outcome.record).detail], ['eve @example.com', 'push refused']);
  });

  for (const c of [...BIDI, ...C1]) {
    it(`an identity holding U+${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()} is refused everywhere it would be written`, () => {
      const who = `ana${c}@example.com`;
      refusedWith(acquire(fresh(), SETTINGS, { identity: who, tokenHash: hex('t'), proofHash: hex('p') }, T0), 'invalid-request');
      refusedWith(petition(silent(), { identity: who }, at(0, 1)), 'invalid-request');
      const held = acquireAs(fresh(), LEAD, T0);
      refusedWith(leaseIds(held.record, held.proof, { to: who, count: 1, newIdentity: true }, at(0, 1)), 'invalid-request');
      refusedWith(assign(held.record, held.proof, { to: who, text: 't', newIdentity: true }, at(0, 1)), 'invalid-request');
      refusedWith(createPage(CONTAINER, { identity: who }, T0), 'invalid-request');
      refusedWith(
        adoptPage(CONTAINER, { ...SETTINGS, operators: [who] }, { identity: who, reason: 'r', grantFloor: 0, nextIdFloor: 1 }, T0),
        'invalid-request',
      );
      const { record } = refusedWith(clear(silent(), SETTINGS, { identity: who, reason: 'r' }, at(3)), 'invalid-request');
      assert.equal(record, undefined, 'not even audited');
    });
  }

  it('the server guard refuses a petition whose stored note holds a control (the replay cleans, so the records differ)', () => {
    const before = silent();
    const clean = ok(petition(before, { identity: ANA, note: 'ship it' }, at(0, 1))).record;
    const context = { settings: SETTINGS, now: at(0, 1), skewMs: DEFAULT_SKEW_MS, requireProof: true, pushed: {} };
    assert.equal(checkRecordUpdate(before, clean, context), undefined, 'the control: a clean note is accepted');
    const reversed = '\u202eti pihs';
    const forged: LockRecord = {
      ...clean,
      queue: [{ ...clean.queue[0], note: reversed }],
      audit: [...clean.audit.slice(0, -1), { ...lastAudit(clean), detail: reversed }],
    };
    assert.match(checkRecordUpdate(before, forged, context) ?? '', /not what petition by ana/);
  });

  it('escapeControls shows each control as \\uXXXX, keeps line feeds and tabs, and leaves other text alone', () => {
    assert.equal(escapeControls('a\u202eb\u009bc\u0007d'), 'a\\u202eb\\u009bc\\u0007d');
    assert.equal(escapeControls('line\n\tnext'), 'line\n\tnext');
    assert.equal(escapeControls('Zoë — 東京 ✓ עברית'), 'Zoë — 東京 ✓ עברית');
    assert.equal(hasControls(escapeControls(dirty('z')).replace(/\n|\t/g, '')), false);
  });
});
