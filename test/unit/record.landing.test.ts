import * as assert from 'node:assert/strict';
import { announceLanding, FULL_COMMIT, landingDetail, parseLandingDetail } from '../../src/core/lockRecord';
import { acquireAs, ANA, at, fresh, lastAudit, LEAD, leaseLost, ok, proofOf, refusedWith } from '../helpers/lockRecordFixture';

/**
 * The shapes a landing announcement accepts (issue #27, mutation testing): each rule of the branch
 * name (as `.lockstep.json` allows it) and of the full commit ids on both sides, and the reading of a
 * `land` line's detail back, which `lockstep verify` and the server guard rely on.
 */
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const A64 = 'a'.repeat(64);

function announce(branch: string, from: string | null, to: string) {
  const held = acquireAs(fresh(), LEAD, at(0));
  return announceLanding(held.record, held.proof, { branch, from, to }, at(1));
}

describe('record: the shape of a landing announcement', () => {
  for (const branch of ['main', '_x', 'Release/1.x', 'feature-9/a_b.c', 'a.lockx', 'x.locked/y', 'a'.repeat(200), 'a/b/c']) {
    it(`accepts the branch name ${branch.length > 40 ? `of ${branch.length} characters` : branch}, named in the land line`, () => {
      const { record, value } = ok(announce(branch, null, B));
      assert.deepEqual(value, { branch, from: null, to: B });
      assert.equal(lastAudit(record).detail, `${branch} new..${B}`);
    });
  }

  for (const branch of [
    '',
    '.x',
    '-x',
    '/x',
    'a..b',
    'a//b',
    'a/.b',
    'a.lock/b',
    'a.lock',
    'a/',
    'a.',
    'a b',
    'a~b',
    'a'.repeat(201),
    'ä',
  ]) {
    it(`refuses the branch name ${JSON.stringify(branch.length > 40 ? `${branch.length} characters` : branch)}`, () => {
      const { error } = refusedWith(announce(branch, null, B), 'invalid-request');
      assert.equal(error.message, 'A landing names a branch and full commit ids (40 or 64 lower-case hexadecimal digits).');
    });
  }

  it('the live holder announces in a land line of its own grant; anyone else loses nothing and writes nothing', () => {
    const held = acquireAs(fresh(), LEAD, at(0));
    const { record } = ok(announceLanding(held.record, held.proof, { branch: 'main', from: A, to: B }, at(1)));
    assert.deepEqual(lastAudit(record), { at: at(1), who: LEAD, action: 'land', grant: 1, outcome: 'done', detail: `main ${A}..${B}` });
    assert.deepEqual(record.audit.slice(0, -1), held.record.audit);
    leaseLost(announceLanding(held.record, proofOf(ANA, 1), { branch: 'main', from: A, to: B }, at(1)), 1);
    leaseLost(announceLanding(held.record, held.proof, { branch: 'main', from: A, to: B }, held.expiresAt), 1);
  });

  it('accepts full commit ids of 40 and of 64 digits on either side', () => {
    assert.deepEqual(ok(announce('main', A, B)).value, { branch: 'main', from: A, to: B });
    assert.deepEqual(ok(announce('main', A64, A64)).value, { branch: 'main', from: A64, to: A64 });
    for (const id of [A, A64, '0123456789abcdef'.repeat(4)]) assert.equal(FULL_COMMIT.test(id), true, id);
  });

  for (const [what, id] of [
    ['39 digits', 'a'.repeat(39)],
    ['41 digits', 'a'.repeat(41)],
    ['63 digits', 'a'.repeat(63)],
    ['65 digits', 'a'.repeat(65)],
    ['40 upper-case digits', 'A'.repeat(40)],
    ['39 digits and a g', `${'a'.repeat(39)}g`],
    ['40 digits after an x', `x${A}`],
    ['40 digits before an x', `${A}x`],
  ]) {
    it(`refuses a commit id of ${what} as the commit or as its base`, () => {
      refusedWith(announce('main', null, id), 'invalid-request');
      refusedWith(announce('main', id, B), 'invalid-request');
      assert.equal(FULL_COMMIT.test(id), false);
    });
  }

  it("reads a land line's detail back: a new branch, a base of 40 or 64 digits", () => {
    assert.deepEqual(parseLandingDetail(`main new..${B}`), { branch: 'main', from: null, to: B });
    assert.deepEqual(parseLandingDetail(`release/1.x ${A}..${B}`), { branch: 'release/1.x', from: A, to: B });
    assert.deepEqual(parseLandingDetail(`main ${A64}..${A64}`), { branch: 'main', from: A64, to: A64 });
    assert.equal(landingDetail({ branch: 'main', from: null, to: B }), `main new..${B}`);
    assert.equal(landingDetail({ branch: 'main', from: A, to: B }), `main ${A}..${B}`);
  });

  for (const detail of [
    undefined,
    '',
    `main new..${B} x`,
    `x main new..${B}`,
    `main old..${B}`,
    `main ${A}...${B}`,
    `main ${A}..${'b'.repeat(39)}`,
    `main ${'a'.repeat(41)}..${B}`,
    `main new..${'B'.repeat(40)}`,
    `a..b new..${B}`,
    `.x new..${B}`,
    ` new..${B}`,
  ]) {
    it(`reads no landing from ${JSON.stringify(detail)?.slice(0, 30) ?? 'no detail'}`, () => {
      assert.equal(parseLandingDetail(detail), undefined);
    });
  }
});
