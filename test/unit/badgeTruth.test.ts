import * as assert from 'node:assert/strict';
import * as protocol from '../../src/core/lockRecord';
import { emptyRecord, type ContainerSettings, type LockRecord } from '../../src/core/lockRecord';
import { describe as describeStatus, type LockStatus } from '../../src/core/lockStatus';
import { readOnlyReason } from '../../src/core/readOnly';
import { badgeFor, turnNotice } from '../../src/extension/badge';
import { CommandIds } from '../../src/extension/commandIds';

/**
 * One truth per state (issue 26): every badge state × every role, rendered into text, tooltip, click and
 * notice, and checked against the protocol — what the words tell the user to do is what the click does,
 * and what the command line would accept (the pure transition functions the CLI runs).
 */
describe('badge: one truth per state and role', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const settings: ContainerSettings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: ['ops@x.io'] };
  const hash = (c: string) => c.repeat(64);
  const ALICE = 'alice@x.io',
    BOB = 'bob@x.io',
    CAROL = 'carol@x.io',
    OPS = 'ops@x.io';
  const holder = (grant: number, expiresAt: number) => ({
    identity: ALICE,
    grant,
    tokenHash: hash('a'),
    proofHash: hash('b'),
    grantedAt: now - 3600_000,
    expiresAt,
    ttlMs: 2 * 3600_000,
  });
  const bobWaits = [{ identity: BOB, at: now - 3600_000 }];

  const states: Record<string, LockRecord> = {
    free: { ...emptyRecord('c'), grant: 3 },
    held: { ...emptyRecord('c'), grant: 3, holder: holder(3, now + 3600_000) },
    'held, bob waits': { ...emptyRecord('c'), grant: 3, holder: holder(3, now + 3600_000), queue: bobWaits },
    'silent, nobody waits': { ...emptyRecord('c'), grant: 3, holder: holder(3, now - 60_000) },
    'silent, bob waits': { ...emptyRecord('c'), grant: 3, holder: holder(3, now - 60_000), queue: bobWaits },
    "released, bob's window": { ...emptyRecord('c'), grant: 3, releasedAt: now - 60_000, queue: bobWaits },
    'cleared, nobody waits': {
      ...emptyRecord('c'),
      grant: 3,
      releasedAt: now - 60_000,
      caution: { silentGrant: 3, since: now - 60_000, by: OPS },
    },
  };
  // Roles: the holder (this clone's session), the holder whose lease lapsed (its session, a later grant), the holder
  // seen from a clone without the session, the queue head, a bystander, an operator.
  const roles: Record<string, { identity: string; session?: { grant: number; tokenHash: string }; operator?: boolean }> = {
    holder: { identity: ALICE, session: { grant: 3, tokenHash: hash('a') } },
    'lapsed holder': { identity: ALICE, session: { grant: 2, tokenHash: hash('z') } },
    'holder, in another clone': { identity: ALICE },
    'queue head': { identity: BOB },
    bystander: { identity: CAROL },
    operator: { identity: OPS, operator: true },
  };

  /** Whether the command line would accept what a word or a click asks for, by the rule it runs. */
  const accepts = (record: LockRecord, identity: string, action: string): boolean => {
    switch (action) {
      case CommandIds.acquire:
        return protocol.acquire(record, settings, { identity, tokenHash: hash('n'), proofHash: hash('p') }, now).ok;
      case CommandIds.clear:
        return protocol.clear(record, settings, { identity, reason: 'checked' }, now).ok;
      case CommandIds.petition:
        return protocol.petition(record, { identity }, now, settings).ok;
      default:
        return true; // opening a page or a menu is always possible
    }
  };

  for (const [stateName, record] of Object.entries(states)) {
    for (const [roleName, role] of Object.entries(roles)) {
      const status: LockStatus = describeStatus(
        record,
        settings,
        { identity: role.identity, ...(role.session ? { session: role.session } : {}) },
        now,
      );
      const badge = badgeFor({ kind: 'status', status, isOperator: role.operator === true }, now);
      it(`${stateName} × ${roleName}: ${badge.text} — the click and the words agree with the protocol`, () => {
        // The click does something the protocol accepts for this person now.
        if (badge.command !== undefined)
          assert.ok(accepts(record, role.identity, badge.command), `the click (${badge.command}) would be refused`);
        const lines = badge.tooltip.split('  \n');
        for (const line of lines) {
          // A line that names the click names what the click does.
          if (/click/i.test(line)) {
            const says = /clear/i.test(line)
              ? CommandIds.clear
              : /acquire|take over/i.test(line)
                ? CommandIds.acquire
                : /petition/i.test(line)
                  ? CommandIds.petition
                  : undefined;
            if (says !== undefined) assert.equal(badge.command, says, `"${line}" — but the click is ${badge.command}`);
          }
          // Advice to act is advice the command line would take.
          if (/^Next: acquire it now/.test(line) || /you may take over|take it over yourself/.test(line))
            assert.ok(accepts(record, role.identity, CommandIds.acquire), `"${line}" — acquire would be refused`);
          if (/petition to join the queue/.test(line))
            assert.ok(accepts(record, role.identity, CommandIds.petition), `"${line}" — petition would be refused`);
          if (/wait for your turn/.test(line)) assert.ok(status.position > 0, `"${line}" — not in the queue`);
        }
        // Nobody is told that someone else holds the lock when it is their own live grant in this clone, nor the reverse.
        if (status.state === 'held-by-me') assert.doesNotMatch(badge.text, /Held by (?!me)/);
        if (/Held by (?!me)/.test(badge.text)) assert.notEqual(status.state, 'held-by-me');
        // A turn notice is only ever for someone whose acquire would be taken.
        if (status.turn !== null && status.turn.identity === role.identity) {
          assert.match(turnNotice(status, now), /your turn/);
          assert.ok(accepts(record, role.identity, CommandIds.acquire), 'told it is their turn, but acquire would be refused');
        }
        // The read-only explanation names a real holder or turn, never a countdown that goes stale.
        if (status.holder !== null || status.turn !== null) assert.doesNotMatch(readOnlyReason(status, now), /\d+s more|for \d+m/);
      });
    }
  }
});
