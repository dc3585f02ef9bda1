/**
 * Loaded by the unit suite only (.mocharc.unit.json): the README promises that every unit test runs under
 * 100 ms (pure logic, injected clock). Each test's own time is recorded (mocha's duration: the test body,
 * not its hooks); when the run ends, one failure names every test that took longer, so a slow test fails
 * the suite instead of only turning yellow. A test that needs real time or real work belongs in the
 * integration or model suite.
 */
import type { Context } from 'mocha';

export const UNIT_TEST_LIMIT_MS = 100;

const slow: string[] = [];

export const mochaHooks = {
  afterEach(this: Context): void {
    const test = this.currentTest;
    if (test?.state === 'passed' && (test.duration ?? 0) > UNIT_TEST_LIMIT_MS) slow.push(`${test.fullTitle()} (${test.duration} ms)`);
  },
  afterAll(): void {
    if (slow.length === 0) return;
    throw new Error(`${slow.length} unit test(s) took longer than ${UNIT_TEST_LIMIT_MS} ms (make them faster, or move them to the ` +
      `integration or model suite):\n  ${slow.join('\n  ')}`);
  },
};
