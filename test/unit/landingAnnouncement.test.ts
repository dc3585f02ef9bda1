import * as assert from 'node:assert/strict';
import { checkRecordUpdate, DEFAULT_SKEW_MS, type RecordUpdateContext } from '../../src/core/chain/recordUpdate';
import * as protocol from '../../src/core/lockRecord';
import { hashProof, hashToken, pushProof } from '../../src/core/tokens';
import { announcementsIn, judgeSteps } from '../../src/core/verify/landingSteps';
import {
  ANA,
  acquireAs,
  at,
  CONTAINER,
  fresh,
  hex,
  lastAudit,
  LEAD,
  leaseLost,
  ok,
  refusedWith,
  SETTINGS,
} from '../helpers/lockRecordFixture';

/**
 * Issue #25: the landing announcement — a transition only the live holder may write, changing
 * nothing but the audit — the server guard's acceptance of it, and the verifier's pure judgement
 * of a push's first-parent steps against the announcements.
 */
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const D = 'd'.repeat(40);

describe('landing announcements (pure rule)', () => {
  const { record: held, proof } = acquireAs(fresh(), LEAD, at(0));

  it('the live holder announces: one land line naming branch and commits, nothing else changes', () => {
    const { record, value } = ok(protocol.announceLanding(held, proof, { branch: 'main', from: A, to: B }, at(1)));
    assert.deepEqual(value, { branch: 'main', from: A, to: B });
    assert.deepEqual({ ...record, audit: held.audit }, held);
    assert.deepEqual(lastAudit(record), { at: at(1), who: LEAD, action: 'land', grant: 1, outcome: 'done', detail: `main ${A}..${B}` });
    const created = ok(protocol.announceLanding(held, proof, { branch: 'release/1.x', from: null, to: B }, at(1))).record;
    assert.deepEqual(protocol.parseLandingDetail(lastAudit(created).detail), { branch: 'release/1.x', from: null, to: B });
  });

  it('nobody else may announce: a lapsed lease, a superseded grant, another token', () => {
    leaseLost(protocol.announceLanding(held, proof, { branch: 'main', from: A, to: B }, at(3)), 1);
    const { record: next } = acquireAs(held, ANA, at(3));
    leaseLost(protocol.announceLanding(next, proof, { branch: 'main', from: A, to: B }, at(3)), 1);
    leaseLost(protocol.announceLanding(held, { ...proof, tokenHash: hex('other') }, { branch: 'main', from: A, to: B }, at(1)), 1);
  });

  it('refuses short or malformed commit ids and branch names', () => {
    for (const landing of [
      { branch: 'main', from: null, to: 'abc1234' },
      { branch: 'main', from: 'x'.repeat(40), to: B },
      { branch: '-x', from: null, to: B },
      { branch: 'a..b', from: null, to: B },
    ]) {
      refusedWith(protocol.announceLanding(held, proof, landing, at(1)), 'invalid-request');
    }
    assert.equal(protocol.parseLandingDetail(`main ${A}..${B} extra`), undefined);
    assert.equal(protocol.parseLandingDetail('landed abc1234'), undefined);
  });
});

describe('server guard: a landing announcement is a holder-only transition', () => {
  const token = hex('owner:lead:1');
  const proofText = pushProof(token, CONTAINER, 1);
  const held = ok(
    protocol.acquire(fresh(), SETTINGS, { identity: LEAD, tokenHash: hashToken(token), proofHash: hashProof(proofText) }, at(0)),
  ).record;
  const holder = { identity: LEAD, tokenHash: hashToken(token), grant: 1 };
  const t = at(1);
  const context = (extra: Partial<RecordUpdateContext> = {}): RecordUpdateContext => ({
    settings: SETTINGS,
    now: t,
    skewMs: DEFAULT_SKEW_MS,
    requireProof: true,
    pushed: { grant: 1, proof: proofText },
    ...extra,
  });
  const announced = ok(protocol.announceLanding(held, holder, { branch: 'main', from: A, to: B }, t)).record;

  it("accepted with the holder's proof", () => {
    assert.equal(checkRecordUpdate(held, announced, context()), undefined);
  });

  it('refused without the proof, in another name, or with anything else changed', () => {
    assert.match(checkRecordUpdate(held, announced, context({ pushed: {} })) ?? '', /does not carry that holder's proof/);
    const forged = { ...announced, audit: [...held.audit, { ...lastAudit(announced), who: ANA }] };
    assert.match(checkRecordUpdate(held, forged, context()) ?? '', /acts for the holder/);
    const grabbed = { ...announced, nextId: 99 };
    assert.match(checkRecordUpdate(held, grabbed, context()) ?? '', /byte for byte/);
    const garbled = { ...announced, audit: [...held.audit, { ...lastAudit(announced), detail: 'main everything' }] };
    assert.match(checkRecordUpdate(held, garbled, context()) ?? '', /must name a branch and the commits/);
  });
});

describe('verify --push: judging first-parent steps', () => {
  const line = (who: string, grant: number, detail: string, outcome: 'done' | 'refused' = 'done'): protocol.AuditLine => ({
    at: at(grant),
    who,
    action: 'land',
    grant,
    outcome,
    detail,
  });

  it('a step is covered by an announcement whose commits include it; the newest one is named', () => {
    const announcements = announcementsIn([
      line(LEAD, 1, `main ${A}..${C}`),
      line(ANA, 2, `main ${A}..${C}`),
      line(ANA, 3, `main ${C}..${D}`, 'refused'),
    ]);
    assert.equal(announcements.length, 2, 'a refused line announces nothing');
    const covers = () => new Set([C, B]);
    const judged = judgeSteps([C, B], 'main', announcements, covers);
    assert.deepEqual(
      judged.map(s => s.announcedBy?.who),
      [ANA, ANA],
    );
  });

  it('an announcement for another branch, or one whose commit is not among the steps, covers nothing', () => {
    const announcements = announcementsIn([line(LEAD, 1, `other ${A}..${C}`), line(LEAD, 1, `main ${A}..${D}`)]);
    const judged = judgeSteps([C, B], 'main', announcements, () => new Set([C, B, D]));
    assert.deepEqual(judged, [{ commit: C }, { commit: B }]);
  });
});
