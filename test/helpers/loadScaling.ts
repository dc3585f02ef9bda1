/**
 * Loaded by the suites whose tests run real processes (.mocharc.integration.json and the live suites' mocha runs):
 * before the first test, every timeout in the tree (each suite's, test's and hook's, as the files set them) is
 * multiplied by the run's slowdown factor (test/helpers/calibration.ts), so that a deadline chosen on an unloaded
 * machine holds on a busy one. The factor is printed once, so a failed run says how loaded it was judged to be.
 */
import type { Context, Hook, Suite, Test } from 'mocha';
import { exportedSlowdown, slowdown } from './calibration';

type Runnable = Test | Hook;

function scaleTree(suite: Suite, factor: number): number {
  let n = 0;
  const scale = (r: Runnable | Suite) => {
    const t = r.timeout();
    if (t > 0) {
      r.timeout(Math.ceil(t * factor));
      n++;
    }
  };
  scale(suite);
  const internal = suite as unknown as { _beforeAll: Hook[]; _beforeEach: Hook[]; _afterEach: Hook[]; _afterAll: Hook[] };
  for (const hook of [...internal._beforeAll, ...internal._beforeEach, ...internal._afterEach, ...internal._afterAll]) scale(hook);
  for (const test of suite.tests) scale(test);
  for (const child of suite.suites) n += scaleTree(child, factor);
  return n;
}

export const mochaHooks = {
  beforeAll(this: Context): void {
    const root = this.test?.parent;
    const factor = slowdown();
    if (!root || factor <= 1) {
      console.log(`[load] slowdown factor ${factor}: deadlines as written`);
      return;
    }
    const scaled = scaleTree(root, factor);
    console.log(
      `[load] slowdown factor ${factor} (run: ${exportedSlowdown() ?? 'not exported'}): ${scaled} timeouts and every test deadline scaled`,
    );
  },
};
