import * as assert from 'node:assert/strict';
import { recordCommitShape } from '../../src/core/guard/recordHistory';
import { DEFAULT_SKEW_MS } from '../../src/core/chain/recordUpdate';
import { checkSignedRestart, checkSignedSnapshot, checkSignedStep, checkSigner } from '../../src/core/chain/signedStep';
import * as protocol from '../../src/core/lockRecord';
import { encodeRecord } from '../../src/core/recordCodec';
import { checkRecordCommit, stampOf, transitionSubject } from '../../src/core/stores/git/recordCommit';
import { hashProof, hashToken } from '../../src/core/tokens';
import { acquireAs, ANA, at, fresh, hex, LEAD, lastAudit, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * A step of a signed lock page is proven only when git verified its signature by a listed key, that
 * key's principal is the step's actor, and the step is a legal transition at its own time. Pure:
 * git's verdict (`%G?`, `%GS`) in, a sentence out. The real keys and git run in
 * test/integration/signedHistory.test.ts.
 */

const good = (signer: string) => ({ status: 'G', signer });

describe('signed lock page: one step', () => {
  const t = at(1);
  const held = acquireAs(fresh(), LEAD, at(0)).record;

  it("accepts a legal step signed by its actor's listed key (control)", () => {
    const released = ok(protocol.release(held, { identity: LEAD, tokenHash: held.holder!.tokenHash, grant: 1 }, t)).record;
    assert.equal(checkSignedStep(held, released, encodeRecord(released), good(LEAD), SETTINGS), undefined);
  });

  it("refuses an unsigned step, a signature no listed key verifies, and another principal's key", () => {
    const released = ok(protocol.release(held, { identity: LEAD, tokenHash: held.holder!.tokenHash, grant: 1 }, t)).record;
    assert.match(checkSignedStep(held, released, encodeRecord(released), { status: 'N', signer: '' }, SETTINGS) ?? '', /not signed/);
    for (const status of ['B', 'U', 'E', 'X', 'Y', 'R']) {
      assert.match(
        checkSignedStep(held, released, encodeRecord(released), { status, signer: LEAD }, SETTINGS) ?? '',
        /does not verify/,
        status,
      );
    }
    assert.match(
      checkSignedStep(held, released, encodeRecord(released), good(ANA), SETTINGS) ?? '',
      new RegExp(`gives ${ANA}, but its audit line acts as ${LEAD}`),
    );
  });

  it('refuses a well-signed step that is no legal transition: ana names herself holder while lead holds', () => {
    const grant = held.grant + 1;
    const forged = {
      ...held,
      grant,
      holder: { ...held.holder!, identity: ANA, grant, tokenHash: hashToken(hex('t')), proofHash: hashProof(hex('p')) },
      audit: [...held.audit, { at: t, who: ANA, action: 'acquire' as const, grant, outcome: 'done' as const }],
    };
    assert.match(checkSignedStep(held, forged, encodeRecord(forged), good(ANA), SETTINGS) ?? '', /not what acquire by/);
  });

  it('creation: an init by its signer, an adopt only by an operator', () => {
    const page = ok(protocol.createPage(fresh().container, { identity: LEAD }, t)).record;
    assert.equal(checkSignedStep(null, page, encodeRecord(page), good(LEAD), SETTINGS), undefined);
    const adopt = (who: string) =>
      ok(
        protocol.adoptPage(
          fresh().container,
          { ...SETTINGS, operators: [who] },
          { identity: who, reason: 'forged', grantFloor: 9, nextIdFloor: 5 },
          t,
        ),
      ).record;
    assert.equal(checkSignedStep(null, adopt(OP), encodeRecord(adopt(OP)), good(OP), SETTINGS), undefined);
    assert.notEqual(checkSignedStep(null, adopt(ANA), encodeRecord(adopt(ANA)), good(ANA), SETTINGS), undefined, 'ana is no operator');
  });

  it("a compaction is signed by the record's last actor or an operator", () => {
    assert.equal(checkSignedSnapshot(held, good(LEAD), SETTINGS), undefined);
    assert.equal(checkSignedSnapshot(held, good(OP), SETTINGS), undefined);
    assert.match(checkSignedSnapshot(held, good(ANA), SETTINGS) ?? '', /last actor or by an operator/);
    assert.match(checkSignedSnapshot(held, { status: 'N', signer: '' }, SETTINGS) ?? '', /not signed/);
  });

  it('checkSigner names both identities and no key', () => {
    assert.equal(checkSigner(good(LEAD), LEAD), undefined);
    assert.doesNotMatch(checkSigner(good(ANA), LEAD) ?? '', /ssh-ed25519|SHA256:/);
  });
});

describe("a record commit may carry its writer's signature, and nothing else more", () => {
  const record = acquireAs(fresh(), LEAD, at(0)).record;
  const line = lastAudit(record);
  const stamp = stampOf(line);
  const who = `${stamp.ident} <${stamp.ident}> ${stamp.seconds} +0000`;
  const head = `tree ${'a'.repeat(40)}\nauthor ${who}\ncommitter ${who}\n`;
  const body = `\n${transitionSubject(line)}\n\nLockstep-Write: 0123456789abcdef\n`;
  const expected = { parents: [], stamp, subject: transitionSubject(line) };
  const signature = 'gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n';

  it('accepts it unsigned and signed (control)', () => {
    assert.equal(checkRecordCommit(head + body, expected), undefined);
    assert.equal(checkRecordCommit(head + signature + body, expected), undefined);
  });

  it('refuses any other header beside the signature', () => {
    assert.match(checkRecordCommit(`${head}encoding ISO-8859-1\n${body}`, expected) ?? '', /headers are not the ones/);
    assert.match(checkRecordCommit(`${head}${signature}mergetag x\n${body}`, expected) ?? '', /headers are not the ones/);
  });
});

describe("the server guard on a signed page: an operator's signed adopt may restart the history", () => {
  const t = at(5);
  const held = acquireAs(fresh(), LEAD, at(4)).record;
  const adopt = (who: string, grantFloor: number, nextIdFloor: number) =>
    ok(
      protocol.adoptPage(
        fresh().container,
        { ...SETTINGS, operators: [who] },
        { identity: who, reason: 'repair', grantFloor, nextIdFloor },
        t,
      ),
    ).record;
  const context = { settings: SETTINGS, now: t, skewMs: DEFAULT_SKEW_MS, requireProof: false, pushed: {} };
  const A = 'a'.repeat(40);

  it('a parentless record is a restart only where the page is signed', () => {
    const commit = { parents: [], files: ['record.json'], snapshot: false };
    assert.deepEqual(recordCommitShape(A, commit, { record: 'record.json', audit: 'audit.log' }, { restart: true }), { kind: 'restart' });
    assert.equal(recordCommitShape(A, commit, { record: 'record.json', audit: 'audit.log' }).kind, 'refuse');
  });

  it("accepts the operator's signed adopt that keeps the fence (control); refuses a lowered fence, another signer, a non-operator, another action", () => {
    assert.equal(checkSignedRestart(held, adopt(OP, held.grant, held.nextId), good(OP), context), undefined);
    assert.equal(checkSignedRestart(undefined, adopt(OP, 0, 1), good(OP), context), undefined, 'an unreadable current record');
    assert.match(
      checkSignedRestart({ ...held, grant: 7 }, adopt(OP, 3, held.nextId), good(OP), context) ?? '',
      /continues its fence: grant #7/,
    );
    assert.match(checkSignedRestart(held, adopt(OP, 9, 9), good(ANA), context) ?? '', /gives ana@example\.com/);
    assert.notEqual(checkSignedRestart(held, adopt(ANA, 9, 9), good(ANA), context), undefined, 'ana is no operator');
    assert.match(checkSignedRestart(held, held, good(LEAD), context) ?? '', /only an operator's signed lockstep adopt/);
  });
});
