import * as assert from 'node:assert/strict';
import { fenceClientPush } from '../../src/core/fencing';
import * as protocol from '../../src/core/lockRecord';
import type { HolderProof, LockRecord, Outcome } from '../../src/core/lockRecord';
import { describe as describeLock } from '../../src/core/lockStatus';
import { ANA, BEN, CYD, LEAD, OP, SETTINGS, acquireAs, at, fresh, hex, ok } from '../helpers/lockRecordFixture';

/**
 * Every refusal tells the truth and the next step: for each state of the page × each person × each
 * transition (and the client's push fence), a refusal's advice must not itself be refused. Advice
 * is recognised by the words and commands it names: acquire, petition, wait.
 */

const WINDOW = SETTINGS.windowMs;
const leadHeld = () => acquireAs(fresh(), LEAD, at(0));
const queued = (record: LockRecord, ...who: string[]) =>
  who.reduce((r, identity, i) => ok(protocol.petition(r, { identity }, at(0, 1) + i)).record, record);

interface Scene {
  readonly name: string;
  readonly record: () => LockRecord;
  readonly now: number;
}
const scenes: Scene[] = [
  { name: 'free', record: fresh, now: at(0) },
  { name: 'held by lead', record: () => leadHeld().record, now: at(1) },
  { name: 'held by lead, ana and ben queued', record: () => queued(leadHeld().record, ANA, BEN), now: at(1) },
  { name: "lead silent, ana and ben queued (ana's window)", record: () => queued(leadHeld().record, ANA, BEN), now: at(2, 1) },
  { name: "lead silent, ana and ben queued (ben's window)", record: () => queued(leadHeld().record, ANA, BEN), now: at(2) + WINDOW + 1 },
  { name: 'lead silent, nobody queued', record: () => leadHeld().record, now: at(3) },
  {
    name: 'released, ana and ben queued',
    record: () => {
      const h = leadHeld();
      return ok(protocol.release(queued(h.record, ANA, BEN), h.proof, at(1))).record;
    },
    now: at(1, 1),
  },
  {
    name: 'cleared by the operator, ben queued',
    record: () => ok(protocol.clear(queued(leadHeld().record, BEN), SETTINGS, { identity: OP, reason: 'gone' }, at(3))).record,
    now: at(3, 1),
  },
  { name: 'ana took over from silent lead', record: () => acquireAs(leadHeld().record, ANA, at(3)).record, now: at(3, 1) },
];
const people = [LEAD, ANA, BEN, CYD, OP];

/** The proof a person's clone would present: the live one when they hold, else a lapsed or made-up one. */
function proofOf(record: LockRecord, identity: string): HolderProof {
  const h = record.holder;
  if (h && h.identity === identity) return { identity, tokenHash: h.tokenHash, grant: h.grant };
  return { identity, tokenHash: hex(`stale:${identity}`), grant: Math.max(1, record.grant) };
}

function attempts(record: LockRecord, identity: string, now: number): [string, Outcome<unknown>][] {
  const proof = proofOf(record, identity);
  return [
    [
      'acquire',
      protocol.acquire(record, SETTINGS, { identity, tokenHash: hex(`new:${identity}`), proofHash: hex(`proof:${identity}`) }, now),
    ],
    ['heartbeat', protocol.heartbeat(record, SETTINGS, proof, now)],
    ['release', protocol.release(record, proof, now, { settings: SETTINGS })],
    ['petition', protocol.petition(record, { identity }, now, SETTINGS)],
    ['withdraw', protocol.withdraw(record, { identity }, now)],
    ['lease-ids', protocol.leaseIds(record, proof, { to: CYD, count: 2, newIdentity: true }, now, SETTINGS)],
    ['assign', protocol.assign(record, proof, { to: CYD, text: 'x', newIdentity: true }, now, SETTINGS)],
    ['next-id', protocol.nextId(record, { identity }, now)],
    ['clear', protocol.clear(record, SETTINGS, { identity, reason: 'gone' }, now)],
  ];
}

/** Asserts that the advice in `message` would be accepted for `identity` now. */
function assertAdviceHolds(message: string, record: LockRecord, identity: string, now: number, what: string): void {
  assert.doesNotMatch(message, /below or past|[Ff]etch, (and|then) petition/, `${what}: a message that sends people the wrong way`);
  if (/lockstep acquire|acquire it now|acquire again/i.test(message)) {
    const outcome = protocol.acquire(record, SETTINGS, { identity, tokenHash: hex('t'), proofHash: hex('p') }, now);
    assert.ok(
      outcome.ok,
      `${what}: advises acquiring, which is refused (${outcome.ok ? '' : outcome.error.message})\n  advice: ${message}`,
    );
  }
  if (/lockstep petition|petition to join/i.test(message)) {
    const outcome = protocol.petition(record, { identity }, now);
    assert.ok(outcome.ok, `${what}: advises petitioning, which is refused\n  advice: ${message}`);
  }
  if (/lockstep wait|wait for your turn/i.test(message)) {
    const status = describeLock(record, SETTINGS, { identity }, now);
    assert.ok(
      status.position > 0 && !status.canAcquire,
      `${what}: advises waiting in the queue, but ${identity} is not waiting there\n  advice: ${message}`,
    );
  }
}

describe('refusals tell the truth and the next step (every state × person × transition)', () => {
  for (const scene of scenes) {
    it(`${scene.name}: no refusal advises an action that would itself be refused`, () => {
      const record = scene.record();
      let refusals = 0;
      for (const identity of people) {
        for (const [name, outcome] of attempts(record, identity, scene.now)) {
          if (outcome.ok) continue;
          refusals++;
          assertAdviceHolds(outcome.error.message, record, identity, scene.now, `${name} by ${identity}`);
        }
        // The status's own "next" line (the badge tooltip, `lockstep status`) obeys the same rule.
        assertAdviceHolds(
          describeLock(record, SETTINGS, { identity }, scene.now).next,
          record,
          identity,
          scene.now,
          `status next for ${identity}`,
        );
        const sessions = [undefined, { grant: Math.max(1, record.grant), token: hex(`other:${identity}`) }];
        for (const session of sessions) {
          const verdict = fenceClientPush(record, session, scene.now, { identity, settings: SETTINGS });
          if (verdict)
            assertAdviceHolds(
              verdict.message,
              record,
              identity,
              scene.now,
              `push by ${identity}${session ? ' with a lapsed session' : ''}`,
            );
        }
      }
      assert.ok(refusals > 0, 'the scene refused something');
    });
  }

  it("the issue's cases: second in the queue is told to wait, not to petition; the holder's expired grant reads as expired", () => {
    const record = queued(leadHeld().record, ANA, BEN);
    const second = protocol.acquire(record, SETTINGS, { identity: BEN, tokenHash: hex('t'), proofHash: hex('p') }, at(1));
    assert.ok(!second.ok);
    assert.match(second.error.message, /position 2 of 2 in the queue: wait for your turn \(lockstep wait\)/);
    assert.doesNotMatch(second.error.message, /[Pp]etition/);
    const expired = protocol.heartbeat(leadHeld().record, SETTINGS, leadHeld().proof, at(2, 5));
    assert.ok(!expired.ok);
    assert.match(expired.error.message, /^Your lease \(grant #1\) expired at /);
  });
});
