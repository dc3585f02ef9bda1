import * as assert from 'node:assert/strict';
import { appendStep, type ChainEnvelope, MAX_CHAIN_BYTES, readChain, type StoredStep, storeChain } from '../../src/core/chain/chainLayout';
import type { ChainStep } from '../../src/core/chain/signedChain';

/**
 * The edges of the stored layout (chainLayout.ts): what a delta step stores (its kept runs, its
 * appended lines: the window's capacity), the whole fallback where no delta rebuilds exactly, the
 * byte bound of the window, every malformed value refused as such, and a value read and written
 * again keeping each step's stored form. The layout is pure over record texts, so the records here
 * are small JSON objects with an audit array (the signed bytes are whatever the text is).
 */

const P = 'e'.repeat(64);
/** A record text: `audit` lines (each a small object) and other fields. */
const rec = (audit: readonly unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ v: 1, audit, ...extra });
const line = (n: number) => ({ at: n, who: 'lead', action: 'heartbeat' });
const step = (r: string, h?: number[]): ChainStep => ({ p: P, r, s: 'sig', ...(h !== undefined ? { h } : {}) });
/** The bytes a window takes as stored: each step's JSON and its separator. */
const storedBytes = (steps: readonly unknown[]) => steps.reduce<number>((n, s) => n + JSON.stringify(s).length + 1, 0);
const fresh = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const malformed = { ok: false, newer: false, why: 'the signed chain is malformed.' };
const noChain = { ok: false, newer: false, why: 'the page holds no signed chain.' };

describe('signed chain layout: edges', () => {
  it('a delta step stores only its kept runs of the lines before and its appended lines', () => {
    const [a, b, c, d] = [line(1), line(2), line(3), line(4)];
    const steps = [step(rec([a, b, c])), step(rec([a, c, d], { v: 2 })), step(rec([a, c, d, a]))];
    const envelope = storeChain(steps);
    assert.deepEqual(envelope.steps[0], { p: P, s: 'sig', r: steps[0].r });
    // b was trimmed: two runs kept, d appended; the record's other fields in `o`.
    assert.deepEqual(envelope.steps[1], {
      p: P,
      s: 'sig',
      o: { v: 2, audit: null },
      k: [
        [0, 1],
        [2, 3],
      ],
      a: [d],
    });
    // One run of three kept; a line equal to an earlier one but after the kept ones is appended.
    assert.deepEqual(envelope.steps[2], { p: P, s: 'sig', o: { v: 1, audit: null }, k: [[0, 3]], a: [a] });
    assert.deepEqual(
      (readChain(fresh(envelope)) as { steps: ChainStep[] }).steps.map(s => s.r),
      steps.map(s => s.r),
    );
  });

  it('lines that repeat before are kept in order, each the first one not yet used', () => {
    const [a, b, c] = [line(1), line(2), line(3)];
    const steps = [step(rec([a, a, b, a])), step(rec([a, a, b, a, c]))];
    assert.deepEqual(storeChain(steps).steps[1], { p: P, s: 'sig', o: { v: 1, audit: null }, k: [[0, 4]], a: [c] });
    // A line kept twice in the new record but once before: the second is appended.
    const again = [step(rec([a, b])), step(rec([a, a, b]))];
    assert.deepEqual(storeChain(again).steps[1], { p: P, s: 'sig', o: { v: 1, audit: null }, k: [[0, 1]], a: [a, b] });
  });

  it('heartbeat times (h) are stored with a whole step and a delta step, and read back; none stored where none are', () => {
    const steps = [step(rec([line(1)]), [1, 2]), step(rec([line(1), line(2)]), [3, 4]), step(rec([line(1), line(2), line(3)]))];
    const envelope = storeChain(steps);
    assert.deepEqual(envelope.steps[0], { p: P, s: 'sig', h: [1, 2], r: steps[0].r });
    assert.deepEqual(envelope.steps[1], { p: P, s: 'sig', h: [3, 4], o: { v: 1, audit: null }, k: [[0, 1]], a: [line(2)] });
    assert.equal('h' in envelope.steps[2], false);
    const read = readChain(fresh(envelope));
    assert.ok(read.ok);
    assert.deepEqual(read.steps, steps);
    assert.equal('h' in read.steps[2], false);
  });

  it('a step is stored whole where no delta rebuilds its bytes: no audit, not JSON, spaced JSON, a nested "audit":null', () => {
    const good = step(rec([line(1)]));
    const cases = [
      JSON.stringify({ v: 1 }), // no audit array
      'not json', // no record at all
      '{ "v": 1, "audit": [] }', // spaced: the rebuilt text would differ
      JSON.stringify({ audit: [line(1)], x: { audit: null } }), // two holes: no delta applies
    ];
    for (const r of cases) {
      const envelope = storeChain([good, step(r)]);
      assert.deepEqual(envelope.steps[1], { p: P, s: 'sig', r }, r);
      assert.equal((readChain(fresh(envelope)) as { steps: ChainStep[] }).steps[1].r, r);
    }
    // After a step that is no record, the next is whole too (there are no lines to keep).
    const after = storeChain([step('not json'), good]);
    assert.deepEqual(after.steps[1], good);
  });

  it('a delta that does not apply reads as no record: its bytes are the stored delta itself', () => {
    const base = storeChain([step(rec([line(1), line(2)])), step(rec([line(1), line(2), line(3)]))]);
    const delta = base.steps[1] as unknown as Record<string, unknown>;
    const cases: Record<string, unknown>[] = [
      { ...delta, k: [[0, 5]] }, // a run past the lines before
      {
        ...delta,
        k: [
          [1, 1],
          [0, 2],
        ],
      }, // an empty run
      { ...delta, k: [[1, 0]] }, // a run backwards
      { ...delta, o: { v: 1, audit: [], x: { audit: null } } }, // audit not the hole
      { ...delta, o: { v: 1, audit: null, x: { audit: null } } }, // two holes
    ];
    for (const bad of cases) {
      const read = readChain({ lockstepChain: 2, steps: [base.steps[0], bad, { ...delta, k: [[0, 1]], a: [] }] });
      assert.ok(read.ok, JSON.stringify(bad));
      assert.equal(read.steps[1].r, JSON.stringify(bad), JSON.stringify(bad));
      assert.deepEqual(read.steps[1], { p: P, s: 'sig', r: JSON.stringify(bad) });
      // The step after it has nothing to apply to: no record either.
      assert.equal(read.steps[2].r, JSON.stringify({ ...delta, k: [[0, 1]], a: [] }));
    }
  });

  it('a delta first in a window, or in a layout 1 value, reads as no record', () => {
    const base = storeChain([step(rec([line(1)])), step(rec([line(1), line(2)]))]);
    const stray = readChain({ lockstepChain: 2, steps: [base.steps[1]] });
    assert.deepEqual(stray, { ok: true, layout: 2, steps: [{ p: P, s: 'sig', r: JSON.stringify(base.steps[1]) }] });
    const v1 = readChain({ lockstepChain: 1, steps: base.steps });
    assert.ok(v1.ok);
    assert.equal(v1.steps[1].r, JSON.stringify(base.steps[1]));
  });

  it('no envelope is no chain; a layout other than 1 and 2 is refused, newer only when it is a later integer', () => {
    for (const value of [null, 'x', 2, [], {}, { lockstepChain: 2 }, { steps: [] }, { lockstepChain: '2', steps: [] }]) {
      assert.deepEqual(readChain(value), noChain, JSON.stringify(value));
    }
    const refused = (layout: number) => readChain({ lockstepChain: layout, steps: [] });
    assert.deepEqual(refused(0), {
      ok: false,
      newer: false,
      why: "the page's signed chain is stored in layout 0, and this version of Lockstep reads layouts 1 and 2.",
    });
    assert.equal((refused(2.5) as { newer: boolean }).newer, false);
    assert.equal((refused(3) as { newer: boolean }).newer, true);
    assert.match((refused(Number.POSITIVE_INFINITY) as { why: string }).why, /stored in layout \?, and/);
    assert.equal((refused(Number.POSITIVE_INFINITY) as { newer: boolean }).newer, false);
  });

  it('a malformed step makes the whole value malformed', () => {
    const whole = { p: P, s: 'sig', r: rec([line(1)]) };
    const delta = { p: P, s: 'sig', o: { audit: null }, k: [[0, 1]], a: [] };
    const bad: unknown[] = [
      null,
      'step',
      { ...whole, p: undefined },
      { ...whole, p: 7 },
      { ...whole, p: [P] },
      { ...whole, p: 'E'.repeat(64) },
      { ...whole, p: `x${P}` },
      { ...whole, p: `${P}x` },
      { ...whole, s: 1 },
      { ...whole, h: 'x' },
      { ...whole, h: [1, 1.5] },
      { ...whole, r: 1 },
      { ...delta, o: undefined },
      { ...delta, o: null },
      { ...delta, o: [] },
      { ...delta, o: 'o' },
      { ...delta, k: undefined },
      { ...delta, k: [[0, 1], 'ab'] },
      { ...delta, k: [[0, 1], [0]] },
      { ...delta, k: [[0, 1, 2]] },
      {
        ...delta,
        k: [
          [0, 1],
          [-1, 1],
        ],
      },
      {
        ...delta,
        k: [
          [0, 1],
          [0.5, 1],
        ],
      },
      { ...delta, k: [[0, -1]] },
      { ...delta, a: undefined },
    ];
    assert.deepEqual(readChain({ lockstepChain: 2, steps: [] }), malformed);
    for (const s of bad) assert.deepEqual(readChain({ lockstepChain: 2, steps: [whole, s] }), malformed, JSON.stringify(s));
    // The same shapes, well formed, are read.
    for (const s of [{ ...whole, p: null }, { ...whole, h: [-1, 2] }, delta]) {
      assert.equal(readChain({ lockstepChain: 2, steps: [whole, s] }).ok, true, JSON.stringify(s));
    }
  });

  it('a window read and written again keeps each step as it was stored (a whole later step, split runs)', () => {
    const a = [line(1), line(2), line(3)];
    const records = [rec(a), rec([...a, line(4)]), rec([...a, line(4), line(5)])];
    const wholeLater = { p: P, s: 'sig', r: records[1] };
    const split: StoredStep = {
      p: P,
      s: 'sig',
      o: { v: 1, audit: null },
      k: [
        [0, 2],
        [2, 4],
      ],
      a: [line(5)],
    };
    const stored: ChainEnvelope = { lockstepChain: 2, steps: [{ p: P, s: 'sig', r: records[0] }, wholeLater, split] };
    const read = readChain(fresh(stored));
    assert.ok(read.ok);
    assert.deepEqual(
      read.steps.map(s => s.r),
      records,
    );
    const next = step(rec([...a, line(4), line(5), line(6)]));
    const { envelope } = appendStep(read.steps, next);
    assert.deepEqual(envelope.steps.slice(0, 3), stored.steps);
    assert.deepEqual(envelope.steps[3], { p: P, s: 'sig', o: { v: 1, audit: null }, k: [[0, 5]], a: [line(6)] });
    // A layout 1 value is written again as deltas; a step that read as no record, whole.
    const v1 = readChain({ lockstepChain: 1, steps: [stored.steps[0], wholeLater] });
    assert.ok(v1.ok);
    const again = appendStep(v1.steps, step(records[2])).envelope;
    assert.deepEqual(again.steps[1], { p: P, s: 'sig', o: { v: 1, audit: null }, k: [[0, 3]], a: [line(4)] });
    const broken = { ...split, k: [[0, 9]] };
    const junk = readChain(fresh({ lockstepChain: 2, steps: [stored.steps[0], wholeLater, broken] }));
    assert.ok(junk.ok);
    const rewritten = appendStep(junk.steps, next).envelope;
    assert.deepEqual(rewritten.steps[2], { p: P, s: 'sig', r: JSON.stringify(broken) });
  });

  it('the window keeps at most MAX_CHAIN_BYTES as stored: the oldest go, the new oldest whole, the newest always stays', () => {
    const pad = 'y'.repeat(100_000);
    const records = Array.from({ length: 10 }, (_, i) => rec([line(1), line(i + 2)], { pad: `${pad}${i}` }));
    const steps = records.map(r => step(r));
    const { steps: kept, envelope } = appendStep(steps.slice(0, -1), steps.at(-1)!);
    const size = storedBytes(envelope.steps);
    assert.ok(size <= MAX_CHAIN_BYTES, `${size} bytes stored`);
    assert.ok(kept.length < 10 && kept.length > 1, `${kept.length} steps kept`);
    assert.deepEqual(kept, steps.slice(-kept.length));
    assert.deepEqual(envelope, storeChain(kept));
    assert.deepEqual(envelope.steps[0], { p: P, s: 'sig', r: kept[0].r });
    assert.ok('o' in envelope.steps[1]);
    const longer = storeChain(steps.slice(-kept.length - 1));
    assert.ok(storedBytes(longer.steps) > MAX_CHAIN_BYTES, 'one more step would not fit');
    // A newest step larger than the bound stays, alone.
    const huge = step('z'.repeat(MAX_CHAIN_BYTES));
    const alone = appendStep(steps.slice(0, 2), huge);
    assert.deepEqual(alone.steps, [huge]);
    assert.deepEqual(alone.envelope.steps, [{ p: P, s: 'sig', r: huge.r }]);
  });

  it('the byte bound is exact: a window of exactly MAX_CHAIN_BYTES stays whole, one byte more drops its oldest', () => {
    const first = (n: number): ChainStep => ({ p: null, r: 'x'.repeat(n), s: '' });
    const last: ChainStep = { p: P, r: 'last', s: '' };
    const bytes = (steps: readonly StoredStep[]) => storedBytes(steps);
    const probe = bytes(storeChain([first(0), last]).steps);
    const fits = first(MAX_CHAIN_BYTES - probe);
    const full = appendStep([fits], last);
    assert.equal(bytes(full.envelope.steps), MAX_CHAIN_BYTES);
    assert.equal(full.steps.length, 2);
    const over = appendStep([first(MAX_CHAIN_BYTES - probe + 1)], last);
    assert.deepEqual(over.steps, [last]);
  });
});
