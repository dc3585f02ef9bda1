import * as assert from 'node:assert/strict';
import { DAY, HOUR } from '../../src/core/clock';
import { clear, heartbeat, petition, release, summarise, withdraw, type LockRecord } from '../../src/core/lockRecord';
import { auditFromHistory, buildTimeline, describeBar, describeWait, longerAudit } from '../../src/core/timeline';
import { ANA, BEN, LEAD, OP, SETTINGS, T0, acquireAs, at, fresh, ok, proofOf } from '../helpers/lockRecordFixture';

const TTL = SETTINGS.leaseTtlMs;
const timelineOf = (record: LockRecord, now: number) => buildTimeline({ audit: record.audit, holder: record.holder, leaseTtlMs: TTL, now });
const hhmm = (ms: number) => `h${(ms - T0) / HOUR}`;

describe('timeline: who held the lock when, from the audit', () => {
  it('draws a released grant from acquire to release, and a held one up to now', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(release(r, proofOf(LEAD, 1), at(2))).record;
    r = acquireAs(r, ANA, at(3)).record;
    const t = timelineOf(r, at(4));
    assert.deepEqual(t.bars, [
      { grant: 1, who: LEAD, from: at(1), to: at(2), ending: 'released', clipped: false },
      { grant: 2, who: ANA, from: at(3), to: at(4), ending: 'holding', clipped: false },
    ]);
    assert.equal(t.to, at(4));
    assert.equal(t.from, at(4) - 7 * DAY);
  });

  it('marks the silent part of a grant an operator cleared, from the expiry its last heartbeat gave it', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(heartbeat(r, SETTINGS, proofOf(LEAD, 1), at(2))).record; // lease now until hour 4
    r = ok(clear(r, SETTINGS, { identity: OP, reason: 'laptop died' }, at(6))).record;
    const [bar] = timelineOf(r, at(7)).bars;
    assert.deepEqual(bar, { grant: 1, who: LEAD, from: at(1), to: at(6), ending: 'cleared', silentFrom: at(2) + TTL, clipped: false });
    assert.equal(describeBar(bar!, hhmm), `Grant #1: ${LEAD}, from h1, silent from h4, cleared by an operator h6.`);
  });

  it('ends a grant that was taken over at the takeover, silent from its expiry', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record; // expires hour 3
    r = acquireAs(r, ANA, at(5)).record;
    const bars = timelineOf(r, at(6)).bars;
    assert.deepEqual(bars[0], { grant: 1, who: LEAD, from: at(1), to: at(5), ending: 'expired', silentFrom: at(1) + TTL, clipped: false });
    assert.equal(bars[1]!.ending, 'holding');
  });

  it('shows a holder whose lease ran out as silent up to now', () => {
    const r = acquireAs(fresh(), LEAD, at(1)).record;
    const [bar] = timelineOf(r, at(5)).bars;
    assert.deepEqual(bar, { grant: 1, who: LEAD, from: at(1), to: at(5), ending: 'silent', silentFrom: at(1) + TTL, clipped: false });
  });

  it('keeps only the last seven days, and marks a bar that began before them as clipped', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(release(r, proofOf(LEAD, 1), at(2))).record;
    r = acquireAs(r, ANA, at(3)).record;
    const now = at(3) + 7 * DAY + HOUR;
    r = ok(release(r, proofOf(ANA, 2), at(3, 30))).record;
    // Grant 1 ended more than seven days before now: gone. Grant 2 also; add a long one that crosses the edge.
    assert.deepEqual(timelineOf(r, now).bars, []);
    const r2 = acquireAs(fresh(), LEAD, at(1)).record;
    const [bar] = buildTimeline({ audit: r2.audit, holder: r2.holder, leaseTtlMs: TTL, now: at(1) + 7 * DAY + 30 * 60_000 }).bars;
    assert.equal(bar!.from, at(1) + 30 * 60_000);
    assert.equal(bar!.clipped, true);
    assert.equal(bar!.ending, 'silent');
  });

  it('starts a grant whose acquire is no longer in the audit at the oldest line kept', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(heartbeat(r, SETTINGS, proofOf(LEAD, 1), at(2))).record;
    r = ok(release(r, proofOf(LEAD, 1), at(3))).record;
    const audit = r.audit.filter(l => l.action !== 'acquire' && l.action !== 'init');
    const [bar] = buildTimeline({ audit, holder: r.holder, leaseTtlMs: TTL, now: at(4) }).bars;
    assert.deepEqual(bar, { grant: 1, who: LEAD, from: at(2), to: at(3), ending: 'released', clipped: true });
  });

  it('measures queue waits: until the waiter acquired, withdrew, or now', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(petition(r, { identity: ANA }, at(1, 30))).record;
    r = ok(petition(r, { identity: BEN }, at(1, 45))).record;
    r = ok(release(r, proofOf(LEAD, 1), at(2))).record;
    r = acquireAs(r, ANA, at(2, 10)).record;
    r = ok(withdraw(r, { identity: BEN }, at(2, 20))).record;
    r = ok(petition(r, { identity: BEN }, at(3))).record;
    const waits = timelineOf(r, at(4)).waits;
    assert.deepEqual(waits, [
      { who: ANA, from: at(1, 30), to: at(2, 10), ending: 'acquired' },
      { who: BEN, from: at(1, 45), to: at(2, 20), ending: 'withdrew' },
      { who: BEN, from: at(3), to: at(4), ending: 'waiting' },
    ]);
    assert.equal(
      describeWait(waits[0]!, hhmm, ms => `${ms / 60_000} min`),
      `${ANA} waited 40 min from h1.5, then acquired.`,
    );
  });

  it('ignores refused lines: a refused acquire draws no bar', () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = { ...r, audit: [...r.audit, { at: at(1, 5), who: ANA, action: 'acquire', grant: 2, outcome: 'refused' }] };
    assert.deepEqual(
      timelineOf(r, at(1, 30)).bars.map(b => b.who),
      [LEAD],
    );
  });

  it("reads the git driver's history (newest first, messages are summaries) back into audit lines, oldest first", () => {
    let r = acquireAs(fresh(), LEAD, at(1)).record;
    r = ok(petition(r, { identity: ANA, note: 'parser: (grant #9) next' }, at(1, 5))).record;
    r = { ...r, audit: [...r.audit, { at: at(1, 6), who: BEN, action: 'acquire', grant: 2, outcome: 'refused' }] };
    r = ok(release(r, proofOf(LEAD, 1), at(2))).record;
    const history = [...r.audit].reverse().map(l => ({ time: l.at, summary: summarise(l, l.outcome) }));
    history.push({ time: at(0), summary: 'compacted snapshot' });
    assert.deepEqual(auditFromHistory(history), r.audit);
  });

  it("takes each entry's own audit line over its summary: a forged summary draws nothing", () => {
    const r = ok(petition(acquireAs(fresh(), LEAD, at(1)).record, { identity: ANA }, at(1, 5))).record;
    const forged = `clear by ${OP} (grant #1): cleared ${LEAD}: mine`;
    const history = [...r.audit]
      .reverse()
      .map(l => ({ time: l.at, summary: l.action === 'petition' ? forged : summarise(l, l.outcome), line: l }));
    assert.deepEqual(auditFromHistory(history), r.audit);
  });

  it("takes the history only where it reaches further back than the record's audit", () => {
    const r = acquireAs(fresh(), LEAD, at(1)).record;
    const older = [{ at: at(0), who: OP, action: 'init' as const, grant: 0, outcome: 'done' as const }, ...r.audit];
    assert.equal(longerAudit(r.audit, older), older);
    assert.equal(longerAudit(r.audit, r.audit.slice(1)), r.audit);
    assert.equal(longerAudit(r.audit, undefined), r.audit);
  });
});
