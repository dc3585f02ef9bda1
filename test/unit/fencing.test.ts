import * as assert from 'node:assert/strict';
import { LockErrorCode, LockFencedError, exitCodeFor } from '../../src/core/errors';
import { fenceClientPush, fenceServerPush, pushOptionsFromEnv } from '../../src/core/fencing';
import { formatClock } from '../../src/core/format';
import { acquire, clear, petition, release, type LockRecord } from '../../src/core/lockRecord';
import { hashProof, hashToken, pushProof } from '../../src/core/tokens';
import { assertHygienic } from '../helpers/hygiene';
import { at, CONTAINER, fresh, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The fence at landing as pure verdicts, over records built by the real transitions with real
 * owner tokens and push proofs. Every refusal must say why, say what to do, carry the grant numbers
 * and the holder's identity, and never contain a token, a proof or their hashes.
 */

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

interface Grant {
  readonly identity: string;
  readonly grant: number;
  readonly token: string;
  readonly proof: string;
}

/** Distinct, recognisable 64-hex tokens (the verdicts only hash them). */
const tokenFor = (identity: string, grant: number): string =>
  Buffer.from(`${identity}#${grant}`.padEnd(32, '.').slice(0, 32)).toString('hex');

function acquireAs(record: LockRecord, identity: string, now: number, ttlMs = SETTINGS.leaseTtlMs): { record: LockRecord; grant: Grant } {
  const grant = record.grant + 1;
  const token = tokenFor(identity, grant);
  const proof = pushProof(token, CONTAINER, grant);
  const done = ok(
    acquire(record, { ...SETTINGS, leaseTtlMs: ttlMs }, { identity, tokenHash: hashToken(token), proofHash: hashProof(proof) }, now),
  );
  return { record: done.record, grant: { identity, grant, token, proof } };
}

const session = (g: Grant) => ({ grant: g.grant, token: g.token });
const pushed = (g: Grant) => ({ grant: g.grant, proof: g.proof });

/** The seed's worked example: alice holds #1 (granted at hour 0), lapses at hour 2; bob takes #2 at hour 3. */
function workedExample() {
  const first = acquireAs(fresh(), ALICE, at(0));
  const second = acquireAs(first.record, BOB, at(3));
  return { alice: first.grant, bob: second.grant, afterAlice: first.record, record: second.record };
}

const everySecret = (...grants: Grant[]): string[] => grants.flatMap(g => [g.token, g.proof, hashToken(g.token), hashProof(g.proof)]);

/** A refusal: typed, exit code 1, grants as fields, why and what to do in words, and no secret anywhere. */
function refusal(
  verdict: LockFencedError | undefined,
  expected: { current: number; presented?: number; why: RegExp; todo: RegExp },
  secrets: readonly string[],
): string {
  assert.ok(verdict instanceof LockFencedError, 'a refusal');
  assert.equal(verdict.code, LockErrorCode.Fenced);
  assert.equal(exitCodeFor(verdict), 1);
  assert.equal(verdict.currentGrant, expected.current);
  assert.equal(verdict.presentedGrant, expected.presented);
  assert.match(verdict.message, expected.why);
  assert.match(verdict.message, expected.todo);
  assertHygienic(verdict, secrets, 'fencing verdict');
  return verdict.message;
}

describe('fencing verdicts (pure)', () => {
  describe('fenceClientPush (pre-push: this clone must hold the live lease and the current grant)', () => {
    it('lets the live holder of the current grant push', () => {
      const { bob, record } = workedExample();
      assert.equal(fenceClientPush(record, session(bob), at(3, 30)), undefined);
    });

    it("the worked example: a stale grant below the current one names both grants and the holder — and the reader's next step", () => {
      const { alice, bob, record } = workedExample();
      const message = refusal(
        fenceClientPush(record, session(alice), at(4), { identity: ALICE, settings: SETTINGS }),
        {
          current: 2,
          presented: 1,
          why: /Your grant #1 has ended; the current grant is #2/,
          todo: /petition to join the queue \(lockstep petition\)/,
        },
        everySecret(alice, bob),
      );
      assert.equal(
        message,
        `Your grant #1 has ended; the current grant is #2, held by ${BOB} since ${formatClock(at(3))}. Your commits stay in this clone: to push them, petition to join the queue (lockstep petition); then rebase onto the new work.`,
      );
    });

    it('a clone without a session: "acquire first" on a free lock, "petition" while someone holds it', () => {
      refusal(
        fenceClientPush(fresh(), undefined, at(0), { identity: ALICE, settings: SETTINGS }),
        { current: 0, why: /does not hold the lock/, todo: /acquire it now \(lockstep acquire\)/ },
        [],
      );
      const { alice, bob, record } = workedExample();
      refusal(
        fenceClientPush(record, undefined, at(4), { identity: ALICE, settings: SETTINGS }),
        {
          current: 2,
          why: /This clone does not hold the lock; the current grant #2 is held by bob@example\.com/,
          todo: /petition to join the queue \(lockstep petition\)/,
        },
        everySecret(alice, bob),
      );
      const queued = ok(petition(record, { identity: ALICE }, at(4))).record;
      refusal(
        fenceClientPush(queued, undefined, at(4), { identity: ALICE, settings: SETTINGS }),
        { current: 2, why: /does not hold the lock/, todo: /position 1 of 1 in the queue: wait for your turn \(lockstep wait\)/ },
        everySecret(alice, bob),
      );
      refusal(
        fenceClientPush(record, undefined, at(4)),
        { current: 2, why: /does not hold the lock/, todo: /lockstep status/ },
        everySecret(alice, bob),
      );
    });

    it('the holder\'s own lease past its expiry (nobody took over yet) cannot push: the expiry time and "acquire again"', () => {
      const { record, grant } = acquireAs(fresh(), ALICE, at(0));
      const expiresAt = record.holder!.expiresAt;
      assert.equal(fenceClientPush(record, session(grant), expiresAt - 1), undefined, 'live until the last millisecond');
      refusal(
        fenceClientPush(record, session(grant), expiresAt),
        {
          current: 1,
          presented: 1,
          why: new RegExp(`Your lease \\(grant #1\\) expired at ${formatClock(expiresAt)}; a lapsed lease cannot push`),
          todo: /lockstep status/,
        },
        everySecret(grant),
      );
    });

    it('a grant that was released or cleared is "no longer held" — acquire again', () => {
      const { record, grant } = acquireAs(fresh(), ALICE, at(0));
      const released = ok(release(record, { identity: ALICE, grant: 1, tokenHash: hashToken(grant.token) }, at(1))).record;
      refusal(
        fenceClientPush(released, session(grant), at(1)),
        { current: 1, presented: 1, why: /Your grant #1 is no longer held \(the lock was released or cleared\)/, todo: /lockstep status/ },
        everySecret(grant),
      );
      const cleared = ok(clear(record, SETTINGS, { identity: OP, reason: 'alice vanished' }, at(3))).record;
      refusal(
        fenceClientPush(cleared, session(grant), at(3)),
        { current: 1, presented: 1, why: /no longer held/, todo: /lockstep status/ },
        everySecret(grant),
      );
    });

    it('the right grant number with another token (a session copied or rebuilt) is not the holder', () => {
      const { bob, record } = workedExample();
      const impostor = { grant: 2, token: tokenFor('mallory@example.com', 2) };
      refusal(fenceClientPush(record, impostor, at(3, 30)), { current: 2, presented: 2, why: /no longer held/, todo: /lockstep status/ }, [
        ...everySecret(bob),
        impostor.token,
        hashToken(impostor.token),
      ]);
    });

    it("a session whose grant is above the record's (another store, a reset record) is refused, never trusted", () => {
      const { alice, record } = workedExample();
      refusal(
        fenceClientPush(record, { grant: 7, token: alice.token }, at(3, 30)),
        { current: 2, presented: 7, why: /Your grant #7 is no longer held/, todo: /lockstep status/ },
        everySecret(alice),
      );
    });
  });

  describe('fenceServerPush (pre-receive: the push must prove the current, live grant)', () => {
    it("lets a push with the live holder's grant and proof land", () => {
      const { bob, record } = workedExample();
      assert.equal(fenceServerPush(record, pushed(bob), at(3, 30)), undefined);
    });

    it("the worked example: the stale holder's genuine proof of #1 is below #2, held by bob — see your status", () => {
      const { alice, bob, record } = workedExample();
      const message = refusal(
        fenceServerPush(record, pushed(alice), at(4)),
        {
          current: 2,
          presented: 1,
          why: /Your grant #1 has ended; the current grant is #2/,
          todo: /`lockstep status` in your clone says your next step/,
        },
        everySecret(alice, bob),
      );
      assert.equal(
        message,
        `Your grant #1 has ended; the current grant is #2, held by ${BOB} since ${formatClock(at(3))}. \`lockstep status\` in your clone says your next step.`,
      );
    });

    it('no proof, or half of one: "carries no proof of grant" — acquire and push again', () => {
      const { alice, bob, record } = workedExample();
      for (const options of [{}, { grant: 2 }, { proof: bob.proof }]) {
        refusal(
          fenceServerPush(record, options, at(3, 30)),
          {
            current: 2,
            why: /This push carries no proof of grant, and this branch is protected by Lockstep/,
            todo: /`lockstep status` in your clone says how to get the lock/,
          },
          everySecret(alice, bob),
        );
      }
    });

    it('a forged proof, a proof of another grant, of another container, or not lowercase hex is "not valid for the current grant"', () => {
      const { alice, bob, record } = workedExample();
      const otherContainer = pushProof(bob.token, '9c1f5e2a-3b4d-4e6f-8a7b-0c1d2e3f4a5b', 2);
      const proofs = [
        'f'.repeat(64),
        alice.proof, // grant #1's proof, claimed as #2
        pushProof(alice.token, CONTAINER, 2), // alice computing #2's proof with her old token
        otherContainer,
        bob.proof.toUpperCase(),
        bob.proof.slice(0, 63),
        `${bob.proof}\n`,
        hashProof(bob.proof), // what the record stores is no proof
      ];
      for (const proof of proofs) {
        refusal(
          fenceServerPush(record, { grant: 2, proof }, at(3, 30)),
          {
            current: 2,
            presented: 2,
            why: new RegExp(`The proof presented for grant #2 is not its holder's proof, held by ${BOB} since ${formatClock(at(3))}`),
            todo: /lockstep status/,
          },
          [...everySecret(alice, bob), proof, otherContainer],
        );
      }
    });

    it('a grant number that was never issued is not valid either', () => {
      const { alice, bob, record } = workedExample();
      refusal(
        fenceServerPush(record, { grant: 3, proof: bob.proof }, at(3, 30)),
        { current: 2, presented: 3, why: /The proof for grant #3 is not valid for the current grant #2/, todo: /lockstep status/ },
        everySecret(alice, bob),
      );
    });

    it("the holder's genuine proof after its lease expired cannot land (nobody took over yet)", () => {
      const { record, grant } = acquireAs(fresh(), ALICE, at(0));
      const expiresAt = record.holder!.expiresAt;
      assert.equal(fenceServerPush(record, pushed(grant), expiresAt - 1), undefined);
      refusal(
        fenceServerPush(record, pushed(grant), expiresAt),
        {
          current: 1,
          presented: 1,
          why: new RegExp(`Grant #1 expired at ${formatClock(expiresAt)}; a lapsed lease cannot land`),
          todo: /lockstep status/,
        },
        everySecret(grant),
      );
    });

    it('after an operator clear, the cleared grant\'s genuine proof is "no longer held"; after a new acquisition, "below the current grant"', () => {
      const { record, grant } = acquireAs(fresh(), ALICE, at(0));
      const cleared = ok(clear(record, SETTINGS, { identity: OP, reason: 'alice vanished' }, at(3))).record;
      refusal(
        fenceServerPush(cleared, pushed(grant), at(3)),
        { current: 1, presented: 1, why: /Grant #1 is no longer held \(the lock was released or cleared\)/, todo: /lockstep status/ },
        everySecret(grant),
      );
      const next = acquireAs(cleared, BOB, at(3, 5));
      refusal(
        fenceServerPush(next.record, pushed(grant), at(3, 10)),
        {
          current: 2,
          presented: 1,
          why: new RegExp(`Your grant #1 has ended; the current grant is #2, held by ${BOB}`),
          todo: /lockstep status/,
        },
        everySecret(grant, next.grant),
      );
      assert.equal(fenceServerPush(next.record, pushed(next.grant), at(3, 10)), undefined);
    });

    it('a container that never issued a grant refuses every landing, even "grant #0"', () => {
      refusal(
        fenceServerPush(fresh(), { grant: 0, proof: 'a'.repeat(64) }, at(0)),
        { current: 0, presented: 0, why: /not valid/, todo: /lockstep status/ },
        [],
      );
    });
  });

  describe('pushOptionsFromEnv (GIT_PUSH_OPTION_COUNT / GIT_PUSH_OPTION_n)', () => {
    const PROOF = `${'c0ffee'.repeat(10)}beef`;
    const env = (...options: string[]) => ({
      GIT_PUSH_OPTION_COUNT: String(options.length),
      ...Object.fromEntries(options.map((o, i) => [`GIT_PUSH_OPTION_${i}`, o])),
    });

    it('reads the grant and the proof, in any order, among other options', () => {
      assert.deepEqual(pushOptionsFromEnv(env('ci.skip', `lockstep-proof=${PROOF}`, 'lockstep-grant=17', 'merge_request.create')), {
        grant: 17,
        proof: PROOF,
      });
      assert.deepEqual(pushOptionsFromEnv(env('lockstep-grant=007')), { grant: 7 });
    });

    it('no push options at all, or a count of zero: nothing', () => {
      assert.deepEqual(pushOptionsFromEnv({}), {});
      assert.deepEqual(pushOptionsFromEnv({ GIT_PUSH_OPTION_COUNT: '0', GIT_PUSH_OPTION_0: 'lockstep-grant=1' }), {});
    });

    it('reads only the options the count covers', () => {
      assert.deepEqual(
        pushOptionsFromEnv({
          GIT_PUSH_OPTION_COUNT: '1',
          GIT_PUSH_OPTION_0: 'lockstep-grant=3',
          GIT_PUSH_OPTION_1: `lockstep-proof=${PROOF}`,
        }),
        { grant: 3 },
      );
    });

    it('ignores a garbage count', () => {
      for (const count of ['abc', '-1', '2.5', 'Infinity', 'NaN', '0x']) {
        assert.deepEqual(
          pushOptionsFromEnv({
            GIT_PUSH_OPTION_COUNT: count,
            GIT_PUSH_OPTION_0: 'lockstep-grant=3',
            GIT_PUSH_OPTION_1: `lockstep-proof=${PROOF}`,
          }),
          {},
          count,
        );
      }
    });

    it('a huge count reads what is there and stops (bounded)', () => {
      const result = pushOptionsFromEnv({
        GIT_PUSH_OPTION_COUNT: '99999999999',
        GIT_PUSH_OPTION_0: 'lockstep-grant=3',
        GIT_PUSH_OPTION_1: `lockstep-proof=${PROOF}`,
      });
      assert.deepEqual(result, { grant: 3, proof: PROOF });
    });

    it('ignores malformed grants and proofs', () => {
      const grants = [
        'lockstep-grant=',
        'lockstep-grant=-1',
        'lockstep-grant=1.5',
        'lockstep-grant=1e3',
        'lockstep-grant= 4',
        'lockstep-grant=4 ',
        'lockstep-grant=4\n',
        'lockstep-grant=1234567890123456',
        'lockstep-grant=0x10',
        'Lockstep-grant=4',
        'lockstep-grant==4',
        'xlockstep-grant=4',
      ];
      for (const option of grants) assert.deepEqual(pushOptionsFromEnv(env(option)), {}, JSON.stringify(option));
      const proofs = [PROOF.slice(1), `${PROOF}0`, PROOF.toUpperCase(), `${PROOF}\n`, ` ${PROOF}`, PROOF.replace('c', 'g'), ''];
      for (const proof of proofs) assert.deepEqual(pushOptionsFromEnv(env(`lockstep-proof=${proof}`)), {}, JSON.stringify(proof));
      assert.deepEqual(pushOptionsFromEnv(env(`lockstep-grant=4,lockstep-proof=${PROOF}`)), {});
    });

    it('the largest accepted grant is a safe integer (15 digits)', () => {
      const largest = pushOptionsFromEnv(env('lockstep-grant=999999999999999'));
      assert.deepEqual(largest, { grant: 999_999_999_999_999 });
      assert.ok(Number.isSafeInteger(largest.grant), 'what it returns is exact');
      // One digit more is refused, so no accepted grant can lose precision.
      assert.deepEqual(pushOptionsFromEnv(env('lockstep-grant=1000000000000000')), {});
      assert.deepEqual(pushOptionsFromEnv(env('lockstep-grant=9007199254740993')), {});
    });

    it("a repeated option: the last one counts (as git config's last value would)", () => {
      assert.deepEqual(
        pushOptionsFromEnv(env('lockstep-grant=1', 'lockstep-grant=2', `lockstep-proof=${'a'.repeat(64)}`, `lockstep-proof=${PROOF}`)),
        { grant: 2, proof: PROOF },
      );
    });

    it('what it parses feeds fenceServerPush: garbage is "no proof", never an exception', () => {
      const { record } = workedExample();
      const verdict = fenceServerPush(
        record,
        pushOptionsFromEnv({ GIT_PUSH_OPTION_COUNT: 'junk', GIT_PUSH_OPTION_0: '\u0000' }),
        at(3, 30),
      );
      assert.match(verdict?.message ?? '', /carries no proof of grant/);
    });
  });
});
