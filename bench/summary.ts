/**
 * One row of the table `npm run bench` prints at its end (scripts/bench.mjs), and the README's benchmark table
 * is that table as one run printed it: what was measured, Lockstep's figure, the peer or floor measured in the
 * same run, and the target with its verdict. A bench calls {@link summaryRow} once per row, after measuring; the
 * row is appended as one JSON line to the file BENCH_SUMMARY names (scripts/bench.mjs sets it), and nothing is
 * written when it is unset (a bench run on its own prints only its own tables).
 *
 * A row states figures the bench measured in this run, never figures copied from elsewhere; a part it could not
 * measure (a server not available) says SKIPPED and why, so the table never reads as met for what did not run.
 */
import * as fs from 'node:fs';

export interface SummaryRow {
  /** The bench's file name without `.ts` (`cliStart`). */
  readonly bench: string;
  /** What one row measures, in a few words (`status` / `acquire` / … on the file driver). */
  readonly what: string;
  /** Lockstep's figures. */
  readonly lockstep: string;
  /** The peers' or the floor's figures from the same run, with the ratios; `—` where there is none. */
  readonly baseline: string;
  /** The target and the verdict, e.g. `≤ 1.3×: **not met**`. */
  readonly target: string;
}

/** Appends `row` to the run's summary (BENCH_SUMMARY); a no-op when the bench runs on its own. */
export function summaryRow(row: SummaryRow): void {
  const file = process.env.BENCH_SUMMARY;
  if (!file) return;
  fs.appendFileSync(file, `${JSON.stringify(row)}\n`);
}

/** `met` or `not met`, bold, as the table writes a verdict. */
export function verdict(met: boolean): string {
  return met ? '**met**' : '**not met**';
}

/** A number as the table writes it: thousands separated, `digits` decimals (none by default). */
export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Why a part could not run, for a SKIPPED cell: the first line of the error's message, without a closing stop or colon. */
export function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim().replace(/[.:]$/, '');
}

/** A ratio as the table writes it: two decimals and ×. */
export function times(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}
