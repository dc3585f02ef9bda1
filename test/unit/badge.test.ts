import * as assert from 'node:assert/strict';
import { emptyRecord, type ContainerSettings, type LockRecord } from '../../src/core/lockRecord';
import { describe as describeStatus, LockState } from '../../src/core/lockStatus';
import { badgeFor, shortName } from '../../src/extension/badge';
import { CommandIds } from '../../src/extension/commandIds';

/** The badge is a pure function of what the extension knows: every state, its text, colour and click. */
describe('badge', () => {
  const now = Date.UTC(2026, 0, 1, 10, 0, 0);
  const settings: ContainerSettings = { leaseTtlMs: 2 * 3600_000, windowMs: 15 * 60_000, operators: ['ops@x.io'] };
  const hash = (c: string) => c.repeat(64);
  const held = (identity: string, grant: number, expiresAt: number): LockRecord => ({
    ...emptyRecord('c'), grant,
    holder: { identity, grant, tokenHash: hash('a'), proofHash: hash('b'), grantedAt: now - 3600_000, expiresAt },
  });
  const badge = (record: LockRecord, identity: string, session?: { grant: number; tokenHash: string }, isOperator = false) =>
    badgeFor({ kind: 'status', status: describeStatus(record, settings, { identity, ...(session ? { session } : {}) }, now), isOperator }, now);

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

  it('Held by NAME: short name in the text, full identity in the tooltip, click petitions', () => {
    const b = badge(held('alice@x.io', 3, now + 60_000), 'bob@x.io');
    assert.equal(b.text, '$(lock) Held by alice');
    assert.match(b.tooltip, /Holder: alice@x\.io/);
    assert.match(b.tooltip, /Grant: #3/);
    assert.equal(b.command, CommandIds.petition);
  });

  it('Queued: position', () => {
    const r = { ...held('alice@x.io', 3, now + 60_000), queue: [{ identity: 'carol@x.io', at: now }, { identity: 'bob@x.io', at: now }] };
    const b = badge(r, 'bob@x.io');
    assert.equal(b.state, LockState.Queued);
    assert.equal(b.text, '$(watch) Queued #2');
  });

  it('Your turn: window left, warning colour, click acquires', () => {
    const r: LockRecord = { ...emptyRecord('c'), grant: 3, releasedAt: now - 5 * 60_000, queue: [{ identity: 'bob@x.io', at: now - 3600_000 }] };
    const b = badge(r, 'bob@x.io');
    assert.equal(b.state, LockState.YourTurn);
    assert.equal(b.text, '$(bell) Your turn · 10m 00s');
    assert.equal(b.severity, 'warning');
    assert.equal(b.command, CommandIds.acquire);
  });

  it("Free during someone else's window: their short name, click petitions", () => {
    const r: LockRecord = { ...emptyRecord('c'), grant: 3, releasedAt: now - 5 * 60_000, queue: [{ identity: 'bob@x.io', at: now - 3600_000 }] };
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

  it('HOLDER SILENT: the operator\'s click opens the clear flow even when the operator could acquire', () => {
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
    const b = badgeFor({ kind: 'no-page', message: 'This store (file driver at /x, prefix p) holds no lock page for container 8bd7…', retryAt: now + 5_000 }, now);
    assert.equal(b.state, 'no-page');
    assert.match(b.text, /no lock page/);
    assert.doesNotMatch(b.text, /Free/);
    assert.match(b.tooltip, /holds no lock page for container 8bd7…/);
    assert.equal(b.severity, 'error');
    assert.equal(b.command, CommandIds.refresh);
  });

  it('the tooltip carries the caution mark after HOLDER SILENT, and only then', () => {
    const record: LockRecord = { ...emptyRecord('c'), grant: 4, caution: { silentGrant: 4, since: now - 60_000, by: 'ops@x.io' } };
    const marked = badgeFor({ kind: 'status', status: describeStatus(record, settings, { identity: 'bob@x.io' }, now), isOperator: false }, now);
    assert.match(marked.tooltip, /Caution: grant #4 went silent; ops@x\.io cleared or took over/);
    const plain = badgeFor({ kind: 'status', status: describeStatus(emptyRecord('c'), settings, { identity: 'bob@x.io' }, now), isOperator: false }, now);
    assert.doesNotMatch(plain.tooltip, /Caution/);
  });
});
