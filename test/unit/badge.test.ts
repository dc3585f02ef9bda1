import * as assert from 'node:assert/strict';
import { emptyRecord, type ContainerSettings, type LockRecord } from '../../src/core/lockRecord';
import { describe as describeStatus, LockState } from '../../src/core/lockStatus';
import { badgeFor, badgeWords, freshnessLine, shortName, turnNotice } from '../../src/extension/badge';
import { CommandIds } from '../../src/extension/commandIds';

/** The badge is a pure function of what the extension knows: every state, its text, colour and click. */
describe('badge', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const settings: ContainerSettings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: ['ops@x.io'] };
  const hash = (c: string) => c.repeat(64);
  const held = (identity: string, grant: number, expiresAt: number): LockRecord => ({
    ...emptyRecord('c'),
    grant,
    holder: { identity, grant, tokenHash: hash('a'), proofHash: hash('b'), grantedAt: now - 3600_000, expiresAt, ttlMs: 2 * 3600_000 },
  });
  const badge = (record: LockRecord, identity: string, session?: { grant: number; tokenHash: string }, isOperator = false) =>
    badgeFor(
      { kind: 'status', status: describeStatus(record, settings, { identity, ...(session ? { session } : {}) }, now), isOperator },
      now,
    );

  it('Free: click acquires', () => {
    const b = badge(emptyRecord('c'), 'bob@x.io');
    assert.equal(b.state, LockState.Free);
    assert.match(b.text, /Free/);
    assert.equal(b.command, CommandIds.acquire);
    assert.equal(b.severity, 'normal');
  });

  it('Held by me: grant and time left, click opens the holder menu', () => {
    const b = badge(held('alice@x.io', 7, now + 90 * 60_000), 'alice@x.io', { grant: 7, tokenHash: hash('a') });
    assert.equal(b.state, LockState.HeldByMe);
    assert.equal(b.text, '$(pass-filled) Held by me #7 · 1h 30m');
    assert.equal(b.command, CommandIds.holderMenu);
    // At a glance unlike Held by NAME: another icon, and its own colour from the theme (charts.green).
    const other = badge(held('alice@x.io', 7, now + 90 * 60_000), 'bob@x.io');
    assert.equal(b.severity, 'mine');
    assert.equal(other.severity, 'normal');
    assert.notEqual(b.text.split(' ')[0], other.text.split(' ')[0]);
  });

  it('Held by me with a queue: how many wait, in the badge text itself', () => {
    const queue = [
      { identity: 'bob@x.io', at: now - 60_000 },
      { identity: 'carol@x.io', at: now - 30_000, note: 'the parser' },
    ];
    const b = badge({ ...held('alice@x.io', 4, now + 90 * 60_000), queue }, 'alice@x.io', { grant: 4, tokenHash: hash('a') });
    assert.equal(b.text, '$(pass-filled) Held by me #4 · 1h 30m · 2 waiting');
    // The others' badges do not count the queue (theirs shows their own place).
    assert.equal(badge({ ...held('alice@x.io', 4, now + 90 * 60_000), queue }, 'dan@x.io').text, '$(lock) Held by alice');
  });

  it('an identity an older client stored with a bidi or C1 control shows it as an escape, in the text, the tooltip and the notice', () => {
    const b = badge(held('ev\u202eil@x.io', 3, now + 60_000), 'bob@x.io');
    for (const text of [b.text, b.tooltip]) {
      assert.ok(!/[\u202e\u009b]/.test(text), JSON.stringify(text));
      assert.match(text, /ev\\u202eil/);
    }
    const silent = describeStatus(
      { ...held('ev\u009bil@x.io', 3, now - 60_000), queue: [{ identity: 'bob@x.io', at: now - 120_000 }] },
      settings,
      { identity: 'bob@x.io' },
      now,
    );
    assert.match(turnNotice(silent, now), /ev\\u009bil/);
  });

  it('Held by NAME: short name in the text, full identity in the tooltip, click petitions', () => {
    const b = badge(held('alice@x.io', 3, now + 60_000), 'bob@x.io');
    assert.equal(b.text, '$(lock) Held by alice');
    assert.match(b.tooltip, /Holder: alice@x\.io/);
    assert.match(b.tooltip, /Grant: #3/);
    assert.equal(b.command, CommandIds.petition);
  });

  it('Queued: position', () => {
    const r = {
      ...held('alice@x.io', 3, now + 60_000),
      queue: [
        { identity: 'carol@x.io', at: now },
        { identity: 'bob@x.io', at: now },
      ],
    };
    const b = badge(r, 'bob@x.io');
    assert.equal(b.state, LockState.Queued);
    assert.equal(b.text, '$(watch) Queued #2');
  });

  it('Your turn: window left, warning colour, click acquires', () => {
    const r: LockRecord = {
      ...emptyRecord('c'),
      grant: 3,
      releasedAt: now - 5 * 60_000,
      queue: [{ identity: 'bob@x.io', at: now - 3600_000 }],
    };
    const b = badge(r, 'bob@x.io');
    assert.equal(b.state, LockState.YourTurn);
    assert.equal(b.text, '$(bell) Your turn · 10m 00s');
    assert.equal(b.severity, 'warning');
    assert.equal(b.command, CommandIds.acquire);
  });

  it("Free during someone else's window: their short name, click petitions", () => {
    const r: LockRecord = {
      ...emptyRecord('c'),
      grant: 3,
      releasedAt: now - 5 * 60_000,
      queue: [{ identity: 'bob@x.io', at: now - 3600_000 }],
    };
    const b = badge(r, 'alice@x.io');
    assert.equal(b.state, LockState.Free);
    assert.equal(b.text, "$(unlock) Free — bob's turn");
    assert.equal(b.command, CommandIds.petition);
  });

  it('HOLDER SILENT: warning colour; operators get the clear command', () => {
    const r = { ...held('alice@x.io', 3, now - 60_000), queue: [{ identity: 'carol@x.io', at: now - 3600_000 }] };
    const bystander = badge(r, 'ops@x.io', undefined, true);
    assert.equal(bystander.state, LockState.HolderSilent);
    assert.equal(bystander.text, '$(warning) HOLDER SILENT');
    assert.equal(bystander.severity, 'warning');
    assert.equal(bystander.command, CommandIds.clear);
    assert.equal(badge(r, 'dave@x.io').command, CommandIds.showLockPage);
  });

  it("HOLDER SILENT is the queue head's badge too (seed 001's worked example); its tooltip and notice say it may take over", () => {
    const r = { ...held('alice@x.io', 3, now - 60_000), queue: [{ identity: 'carol@x.io', at: now - 3600_000 }] };
    const head = badge(r, 'carol@x.io');
    assert.equal(head.state, LockState.HolderSilent);
    assert.equal(head.text, '$(warning) HOLDER SILENT', "the same words as everyone's");
    assert.equal(head.severity, 'warning');
    assert.equal(head.command, CommandIds.acquire, "the head's click acquires");
    assert.match(head.tooltip, /Your turn: you may take over\*\* — acquire within 14m 00s/);
    assert.doesNotMatch(head.tooltip, /you may clear/);
    const notice = turnNotice(describeStatus(r, settings, { identity: 'carol@x.io' }, now), now);
    assert.match(
      notice,
      /^Lockstep: HOLDER SILENT — alice@x\.io's lease \(grant #3\) ran out without a release\. It is your turn: you may take over by acquiring the lock/,
    );
    // A bystander sees the same words and is told neither.
    const bystander = badge(r, 'dave@x.io');
    assert.equal(bystander.text, head.text);
    assert.doesNotMatch(bystander.tooltip, /take over|clear this lock/);
  });

  it("HOLDER SILENT: an operator's tooltip says it may clear; nobody else's does", () => {
    const r = { ...held('alice@x.io', 3, now - 60_000), queue: [{ identity: 'carol@x.io', at: now - 3600_000 }] };
    const operator = badge(r, 'ops@x.io', undefined, true);
    assert.equal(operator.text, '$(warning) HOLDER SILENT');
    assert.match(operator.tooltip, /You are an operator: click to clear this lock \(it asks for the reason/);
    assert.doesNotMatch(operator.tooltip, /Next: acquire/, 'the click clears: no line says the click acquires');
    assert.doesNotMatch(badge(r, 'dave@x.io').tooltip, /clear this lock/);
    // An operator who is also the queue head is told both, and which the click does: it clears (it never acquires).
    const both = badge(r, 'carol@x.io', undefined, true);
    assert.match(both.tooltip, /click to clear this lock/);
    assert.match(both.tooltip, /Or take it over yourself: Lockstep: Acquire Lock from the Command Palette, or lockstep acquire, within /);
    assert.doesNotMatch(both.tooltip, /\(click, or lockstep acquire\)/);
    assert.equal(both.command, CommandIds.clear);
  });

  it('the notice after a release says the lock is yours to take', () => {
    const r: LockRecord = {
      ...emptyRecord('c'),
      grant: 3,
      releasedAt: now - 5 * 60_000,
      queue: [{ identity: 'bob@x.io', at: now - 3600_000 }],
    };
    assert.match(
      turnNotice(describeStatus(r, settings, { identity: 'bob@x.io' }, now), now),
      /^Lockstep: your turn — the lock is yours to take \(your window ends .*, in 10m 00s\)\.$/,
    );
  });

  it("HOLDER SILENT: the operator's click opens the clear flow even when the operator could acquire", () => {
    const r = held('alice@x.io', 3, now - 60_000);
    const operator = badge(r, 'ops@x.io', undefined, true);
    assert.equal(operator.state, LockState.HolderSilent);
    assert.equal(operator.command, CommandIds.clear);
    assert.equal(badge(r, 'dave@x.io').command, CommandIds.acquire, 'anyone else who may acquire gets acquire');
  });

  it('Stale grant: error colour, says the push is blocked', () => {
    const b = badge(held('bob@x.io', 4, now + 60_000), 'alice@x.io', { grant: 3, tokenHash: hash('a') });
    assert.equal(b.state, LockState.Stale);
    assert.equal(b.text, '$(error) Stale grant #3 — push blocked');
    assert.equal(b.severity, 'error');
  });

  it('Offline: error colour, retry countdown, click refreshes', () => {
    const b = badgeFor({ kind: 'offline', message: 'The backend is unreachable.', retryAt: now + 4000 }, now);
    assert.equal(b.state, 'offline');
    assert.match(b.text, /Offline/);
    assert.match(b.tooltip, /Retrying in 4s/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('Lease lost (offline): error colour, names the grant and its expiry, says it will not be renewed, click retries', () => {
    const b = badgeFor({ kind: 'lease-lost-offline', grant: 7, expiredAt: now - 60_000, retryAt: now + 2000 }, now);
    assert.equal(b.state, 'lease-lost-offline');
    assert.equal(b.text, '$(error) Lease lost (offline) #7');
    assert.match(b.tooltip, /grant #7\) expired at .* while the backend was unreachable/);
    assert.match(b.tooltip, /will not be renewed/);
    assert.match(b.tooltip, /Retrying the backend in 2s/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('Not initialised: click initialises', () => {
    const b = badgeFor({ kind: 'not-initialised' }, now);
    assert.equal(b.command, CommandIds.initialise);
    assert.match(b.text, /not initialised/);
  });

  it('shortName keeps the part before @', () => {
    assert.equal(shortName('alice@x.io'), 'alice');
    assert.equal(shortName('build-bot'), 'build-bot');
  });
});

describe('badge: the page rule and the caution mark', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const settings: ContainerSettings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: [] };

  it('no lock page: an error badge with the message, never Free; click retries', () => {
    const b = badgeFor(
      { kind: 'no-page', message: 'This store (file driver at /x, prefix p) holds no lock page for container 8bd7…', retryAt: now + 5_000 },
      now,
    );
    assert.equal(b.state, 'no-page');
    assert.match(b.text, /no lock page/);
    assert.doesNotMatch(b.text, /Free/);
    assert.match(b.tooltip, /holds no lock page for container 8bd7…/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('a tampered (signed) page: an error badge naming it, never Free and never a holder; click retries', () => {
    const b = badgeFor(
      {
        kind: 'tampered',
        message: 'The lock page is tampered: its history step 0123456789ab is not proven — its commit is not signed.',
        retryAt: now + 5_000,
      },
      now,
    );
    assert.equal(b.state, 'tampered');
    assert.match(b.text, /page tampered/);
    assert.doesNotMatch(b.text, /Free|Held/);
    assert.match(b.tooltip, /0123456789ab is not proven/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('settings that are not valid: an error badge that says so (not Offline, never Free); click reads them again', () => {
    const b = badgeFor(
      {
        kind: 'misconfigured',
        message: '.lockstep.json: "protectedBranch" is not a setting Lockstep knows (did you mean protectedBranches?).',
        retryAt: now + 5_000,
      },
      now,
    );
    assert.equal(b.state, 'misconfigured');
    assert.match(b.text, /settings not valid/);
    assert.doesNotMatch(b.text, /Free|Offline/);
    assert.match(b.tooltip, /did you mean protectedBranches/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('the tooltip carries the caution mark after HOLDER SILENT, and only then', () => {
    const record: LockRecord = { ...emptyRecord('c'), grant: 4, caution: { silentGrant: 4, since: now - 60_000, by: 'ops@x.io' } };
    const marked = badgeFor(
      { kind: 'status', status: describeStatus(record, settings, { identity: 'bob@x.io' }, now), isOperator: false },
      now,
    );
    assert.match(marked.tooltip, /Caution: grant #4 went silent; ops@x\.io cleared or took over/);
    const plain = badgeFor(
      { kind: 'status', status: describeStatus(emptyRecord('c'), settings, { identity: 'bob@x.io' }, now), isOperator: false },
      now,
    );
    assert.doesNotMatch(plain.tooltip, /Caution/);
  });

  describe('the caution mark is in the badge text itself, in every state, and only while the record carries caution', () => {
    const caution = { silentGrant: 4, since: now - 60_000, by: 'ops@x.io' };
    const hash = (c: string) => c.repeat(64);
    const holder = (identity: string, grant: number, expiresAt: number) => ({
      identity,
      grant,
      tokenHash: hash('a'),
      proofHash: hash('b'),
      grantedAt: now - 3600_000,
      expiresAt,
      ttlMs: 2 * 3600_000,
    });
    const cases: {
      title: string;
      record: LockRecord;
      identity: string;
      session?: { grant: number; tokenHash: string };
      state: LockState;
      words: string;
    }[] = [
      {
        title: 'free after a clear',
        record: { ...emptyRecord('c'), grant: 4, caution },
        identity: 'bob@x.io',
        state: LockState.Free,
        words: 'Free · caution',
      },
      {
        title: 'held by the one who took over',
        record: { ...emptyRecord('c'), grant: 5, caution, holder: holder('carol@x.io', 5, now + 60_000) },
        identity: 'bob@x.io',
        state: LockState.HeldByOther,
        words: 'Held by carol · caution',
      },
      {
        title: 'held by me',
        record: { ...emptyRecord('c'), grant: 5, caution, holder: holder('carol@x.io', 5, now + 60_000) },
        identity: 'carol@x.io',
        session: { grant: 5, tokenHash: hash('a') },
        state: LockState.HeldByMe,
        words: 'Held by me #5 · 1m 00s · caution',
      },
      {
        title: 'silent again',
        record: { ...emptyRecord('c'), grant: 5, caution, holder: holder('carol@x.io', 5, now - 60_000) },
        identity: 'bob@x.io',
        state: LockState.HolderSilent,
        words: 'HOLDER SILENT · caution',
      },
    ];
    for (const c of cases) {
      it(`${c.title}: "${c.words}"`, () => {
        const status = describeStatus(c.record, settings, { identity: c.identity, ...(c.session ? { session: c.session } : {}) }, now);
        const marked = badgeFor({ kind: 'status', status, isOperator: false }, now);
        assert.equal(marked.state, c.state);
        assert.equal(badgeWords(marked), c.words);
        assert.match(marked.text, /\$\(warning\) caution$/, 'an icon and the word');
        const plain = badgeFor({ kind: 'status', status: { ...status, caution: null }, isOperator: false }, now);
        assert.doesNotMatch(plain.text, /caution/);
        assert.equal(badgeWords(marked).length - badgeWords(plain).length, ' · caution'.length, 'the mark keeps the badge short');
      });
    }
  });

  describe('freshness: the tooltip states how stale the badge can be on this driver', () => {
    const status = describeStatus(emptyRecord('c'), settings, { identity: 'bob@x.io' }, now);
    const tooltip = (freshness?: { withinMs: number; activeWithinMs?: number; announced?: boolean }) =>
      badgeFor({ kind: 'status', status, isOperator: false, ...(freshness ? { freshness } : {}) }, now).tooltip;

    it('git (a polling watch): the idle bound and the fast bound while holding or waiting, as the last line', () => {
      const text = tooltip({ withinMs: 36_000, activeWithinMs: 2_000 });
      assert.equal(text.split('  \n').at(-1), 'Updates: within 36s; within 2s while you hold, wait or just acted');
      assert.ok(text.startsWith(tooltip()), 'the rest of the tooltip is unchanged');
    });

    it('drivers that announce changes, and the plain poll setting', () => {
      assert.equal(freshnessLine({ withinMs: 30_000, announced: true }), 'Updates: as they happen; re-read at least every 30s');
      assert.equal(freshnessLine({ withinMs: 10_000 }), 'Updates: within 10s');
      assert.equal(freshnessLine({ withinMs: 50, activeWithinMs: 50 }), 'Updates: within 1s');
    });

    it('no line while the extension does not know its watch yet', () => {
      assert.doesNotMatch(tooltip(), /Updates:/);
    });
  });
});
