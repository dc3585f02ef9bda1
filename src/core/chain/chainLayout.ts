import type { ChainStep } from './signedChain';

/**
 * How a signed chain (signedChain.ts) is stored in the one value of a page (docs/protocol.md#signed-chains).
 *
 * Layout 2 (`lockstepChain: 2`): the window's oldest step is whole (`r`, the record's exact bytes:
 * the checkpoint); every later step keeps its record as a delta against the record of the step
 * before it — `o`, the record with its audit array set to null; `k`, the runs `[from, to)` of the
 * step before's audit lines it keeps, in order; `a`, the audit lines appended since. A reader
 * rebuilds the window forward from its whole step, and every rebuilt record is the exact bytes the
 * signature covers and the next step's `p` names, so a rebuild that differs by a byte fails.
 * Layout 1 (`lockstepChain: 1`, every step whole) is still read, and written again as layout 2.
 * A value of a later layout is refused as such (never read as free, never as tampered).
 * Pure: no I/O.
 */

/** The layout this version writes. */
export const CHAIN_LAYOUT = 2;
/** A window keeps at most this many steps… */
export const MAX_CHAIN_STEPS = 1024;
/** …and at most this many bytes as stored (the whole checkpoint included; the newest step always stays). */
export const MAX_CHAIN_BYTES = 768 * 1024;

/** A step as layout 2 stores it: whole (the window's first) or a delta against the step before. */
export type StoredStep = WholeStep | DeltaStep;
interface Signed {
  readonly p: string | null;
  readonly s: string;
  /** The times of the heartbeats a coalesced step stands for (heartbeatRenewals.ts). */
  readonly h?: readonly number[];
}
export interface WholeStep extends Signed {
  readonly r: string;
}
export interface DeltaStep extends Signed {
  /** The record with `audit: null`. */
  readonly o: Record<string, unknown>;
  /** Runs `[from, to)` of the step before's audit lines kept, in order. */
  readonly k: readonly (readonly [number, number])[];
  /** Audit lines appended after the kept ones. */
  readonly a: readonly unknown[];
}

/** The stored value of a signed page. */
export interface ChainEnvelope {
  readonly lockstepChain: number;
  readonly steps: readonly (StoredStep | ChainStep)[];
}

/** A stored value read back: the whole steps, or why it is no chain this version reads. */
export type ReadChain =
  | { readonly ok: true; readonly layout: number; readonly steps: ChainStep[] }
  | { readonly ok: false; readonly newer: boolean; readonly why: string };

/** Whether `value` is the envelope of a signed chain of any layout (a version mark and steps). */
export function isChainEnvelope(value: unknown): value is ChainEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { lockstepChain?: unknown; steps?: unknown };
  return typeof v.lockstepChain === 'number' && Array.isArray(v.steps);
}

/** The whole steps of a stored chain, oldest first. A delta that cannot be applied gives a step whose record is no record. */
export function readChain(value: unknown): ReadChain {
  if (!isChainEnvelope(value)) return { ok: false, newer: false, why: 'the page holds no signed chain.' };
  const layout = value.lockstepChain;
  if (layout !== 1 && layout !== 2) {
    return {
      ok: false,
      newer: Number.isInteger(layout) && layout > CHAIN_LAYOUT,
      why: `the page's signed chain is stored in layout ${Number.isFinite(layout) ? layout : '?'}, and this version of Lockstep reads layouts 1 and 2.`,
    };
  }
  const stored = value.steps;
  if (stored.length === 0 || !stored.every(isStoredStep)) return { ok: false, newer: false, why: 'the signed chain is malformed.' };
  const steps: ChainStep[] = [];
  let lines: string[] | undefined;
  for (const [i, s] of stored.entries()) {
    const base = { p: s.p, s: s.s, ...(s.h !== undefined ? { h: s.h } : {}) };
    if ('r' in s) {
      steps.push({ ...base, r: s.r });
      if (i > 0 && layout === 2) knownDelta.set(steps[i], { before: steps[i - 1], stored: s });
      lines = auditLines(s.r);
    } else if (layout === 1 || i === 0 || lines === undefined) {
      // A delta needs a step before it; a stray one reads as no record (tampered where it stands).
      steps.push({ ...base, r: JSON.stringify(s) });
      lines = undefined;
    } else {
      const rebuilt = applyDelta(lines, s);
      steps.push({ ...base, r: rebuilt?.text ?? JSON.stringify(s) });
      if (rebuilt !== undefined) knownDelta.set(steps[i], { before: steps[i - 1], stored: s });
      lines = rebuilt?.lines;
    }
  }
  return { ok: true, layout, steps };
}

/** The value layout 2 stores for `steps` (whole, oldest first): the first whole, the others deltas when one rebuilds exactly. */
export function storeChain(steps: readonly ChainStep[]): ChainEnvelope {
  return { lockstepChain: CHAIN_LAYOUT, steps: storedForms(steps) };
}

/**
 * The window after appending `next` to `steps`, and the value that stores it: the oldest steps go
 * past {@link MAX_CHAIN_STEPS} or {@link MAX_CHAIN_BYTES} as stored (the new oldest then stored
 * whole); the newest always stays.
 */
export function appendStep(steps: readonly ChainStep[], next: ChainStep): { steps: ChainStep[]; envelope: ChainEnvelope } {
  const all = [...steps, next].slice(-MAX_CHAIN_STEPS);
  const delta = all.map((step, i) => (i === 0 ? wholeOf(step) : deltaAfter(all[i - 1], step)));
  let bytes = 0;
  for (let i = 1; i < all.length; i++) bytes += sizeOf(delta[i]);
  let start = 0;
  // The window from `start`: its first step whole, the rest as deltas.
  let first = wholeOf(all[0]);
  while (start < all.length - 1 && sizeOf(first) + bytes > MAX_CHAIN_BYTES) {
    start++;
    bytes -= sizeOf(delta[start]);
    first = wholeOf(all[start]);
  }
  const kept = all.slice(start);
  return { steps: kept, envelope: { lockstepChain: CHAIN_LAYOUT, steps: kept.map((_, i) => (i === 0 ? first : delta[start + i])) } };
}

function sizeOf(s: StoredStep): number {
  const known = knownSize.get(s);
  if (known !== undefined) return known;
  const n = JSON.stringify(s).length + 1;
  knownSize.set(s, n);
  return n;
}

/** `step` stored whole (one object per step, so that its size is measured once). */
function wholeOf(step: ChainStep): WholeStep {
  let whole = knownWhole.get(step);
  if (whole === undefined) {
    whole = { p: step.p, s: step.s, ...(step.h !== undefined ? { h: step.h } : {}), r: step.r };
    knownWhole.set(step, whole);
  }
  return whole;
}
const knownWhole = new WeakMap<ChainStep, WholeStep>();

/** A step's stored delta, as last read or written, and the step it is a delta over (valid only after that one). */
const knownDelta = new WeakMap<ChainStep, { readonly before: ChainStep; readonly stored: StoredStep }>();
const knownSize = new WeakMap<StoredStep, number>();

/** Each step stored as a delta over the step before (whole where none rebuilds exactly; the first whole). */
function storedForms(steps: readonly ChainStep[]): StoredStep[] {
  return steps.map((step, i) => (i === 0 ? wholeOf(step) : deltaAfter(steps[i - 1], step)));
}

/** `step` stored as a delta over `before` (whole where none rebuilds exactly), remembered while both live. */
function deltaAfter(before: ChainStep, step: ChainStep): StoredStep {
  const known = knownDelta.get(step);
  if (known?.before === before) return known.stored;
  const lines = auditLines(step.r);
  const over = auditLines(before.r);
  const made = over !== undefined && lines !== undefined ? deltaOf(over, lines, step.r) : undefined;
  const stored: StoredStep =
    made === undefined ? wholeOf(step) : { p: step.p, s: step.s, ...(step.h !== undefined ? { h: step.h } : {}), ...made };
  knownDelta.set(step, { before, stored });
  return stored;
}

function isStoredStep(s: unknown): s is StoredStep {
  if (typeof s !== 'object' || s === null) return false;
  const v = s as Partial<WholeStep & DeltaStep>;
  if (!(v.p === null || (typeof v.p === 'string' && /^[0-9a-f]{64}$/.test(v.p)))) return false;
  if (typeof v.s !== 'string') return false;
  if (v.h !== undefined && !(Array.isArray(v.h) && v.h.every(t => Number.isSafeInteger(t)))) return false;
  if (typeof v.r === 'string') return true;
  return (
    typeof v.o === 'object' &&
    v.o !== null &&
    !Array.isArray(v.o) &&
    Array.isArray(v.k) &&
    v.k.every(run => Array.isArray(run) && run.length === 2 && run.every(n => Number.isSafeInteger(n) && n >= 0)) &&
    Array.isArray(v.a)
  );
}

/** The JSON text of each audit line of a record's text; undefined when it is no object with an audit array. */
function auditLines(text: string): string[] | undefined {
  try {
    const value = JSON.parse(text) as { audit?: unknown };
    if (typeof value !== 'object' || value === null || !Array.isArray(value.audit)) return undefined;
    return value.audit.map(line => JSON.stringify(line));
  } catch {
    return undefined;
  }
}

const HOLE = '"audit":null';

/** The record text a delta rebuilds over the lines before it, and its lines; undefined when it does not apply. */
function applyDelta(before: readonly string[], delta: DeltaStep): { text: string; lines: string[] } | undefined {
  const lines: string[] = [];
  for (const [from, to] of delta.k) {
    if (from >= to || to > before.length) return undefined;
    for (let i = from; i < to; i++) lines.push(before[i]);
  }
  for (const line of delta.a) lines.push(JSON.stringify(line));
  if (delta.o.audit !== null) return undefined;
  const shell = JSON.stringify(delta.o);
  const at = shell.indexOf(HOLE);
  if (at < 0 || shell.indexOf(HOLE, at + 1) >= 0) return undefined;
  return { text: `${shell.slice(0, at)}"audit":[${lines.join(',')}]${shell.slice(at + HOLE.length)}`, lines };
}

/**
 * The delta of a record (`text`, its audit `lines`) over the audit lines before it: the lines kept
 * in order (greedy, so the folded or trimmed ones go), the rest appended. Undefined when it does not
 * rebuild `text` byte for byte (then the step is stored whole).
 */
function deltaOf(before: readonly string[], lines: readonly string[], text: string): Omit<DeltaStep, 'p' | 's' | 'h'> | undefined {
  const where = new Map<string, number[]>();
  for (const [i, line] of before.entries()) {
    const list = where.get(line);
    if (list === undefined) where.set(line, [i]);
    else list.push(i);
  }
  const runs: [number, number][] = [];
  let next = 0;
  let kept = 0;
  for (const line of lines) {
    const at = where.get(line)?.find(i => i >= next);
    if (at === undefined) break;
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === at) last[1] = at + 1;
    else runs.push([at, at + 1]);
    next = at + 1;
    kept++;
  }
  let o: Record<string, unknown>;
  try {
    o = { ...(JSON.parse(text) as Record<string, unknown>), audit: null };
  } catch {
    return undefined;
  }
  const delta = { o, k: runs, a: lines.slice(kept).map(line => JSON.parse(line) as unknown) };
  const rebuilt = applyDelta(before, { p: null, s: '', ...delta });
  return rebuilt !== undefined && rebuilt.text === text ? delta : undefined;
}
