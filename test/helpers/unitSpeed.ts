/**
 * Loaded by the unit suite only (.mocharc.unit.json): the README promises that every unit test runs under
 * 100 ms (pure logic, injected clock). What is measured is the CPU time of the test body (process.cpuUsage, user
 * plus system, from the moment mocha calls the test until it returns or its promise settles), not its wall time:
 * on a machine whose cores are busy with other work a test's wall time grows with the load, its CPU time does not,
 * so the verdict does not depend on how busy the machine is. When the run ends, one failure names every test whose
 * CPU time was over the limit. A test whose wall time was over the limit while its CPU time was not is reported
 * (it waited: for the scheduler, or for real time, which a unit test should not need) but does not fail the run.
 * A test that needs real time or real work belongs in the integration or model suite.
 */
import type { Context, Func, Test } from 'mocha';

export const UNIT_TEST_LIMIT_MS = 100;

const cpuMs = new WeakMap<Test, number>();
const slow: string[] = [];
const waited: string[] = [];

/** The CPU time (ms) this process spent since `start` (a process.cpuUsage() reading). */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * Wraps a test's body so that its CPU time is recorded. Callback-style tests (`done`) keep their arity: they are
 * measured until their body returns, which is where their synchronous work is.
 */
export function measureCpu(test: Test): void {
  const body = test.fn;
  if (!body || (body as { lockstepMeasured?: boolean }).lockstepMeasured) return;
  const record = (start: NodeJS.CpuUsage) => cpuMs.set(test, cpuMsSince(start));
  const settle = <T>(start: NodeJS.CpuUsage, out: T): T => {
    const thenable = out as unknown as PromiseLike<unknown> | undefined;
    if (thenable && typeof thenable.then === 'function') {
      return Promise.resolve(thenable).then(
        v => {
          record(start);
          return v;
        },
        e => {
          record(start);
          throw e;
        },
      ) as unknown as T;
    }
    record(start);
    return out;
  };
  let wrapped: Func;
  if (body.length > 0) {
    wrapped = function (this: Context, done: Parameters<Func>[0]) {
      const start = process.cpuUsage();
      try {
        return settle(start, body.call(this, done));
      } catch (e) {
        record(start);
        throw e;
      }
    } as Func;
  } else {
    wrapped = function (this: Context) {
      const start = process.cpuUsage();
      try {
        return settle(start, (body as () => unknown).call(this));
      } catch (e) {
        record(start);
        throw e;
      }
    } as unknown as Func;
  }
  (wrapped as { lockstepMeasured?: boolean }).lockstepMeasured = true;
  test.fn = wrapped;
}

export const mochaHooks = {
  beforeEach(this: Context): void {
    const test = this.currentTest;
    if (test) measureCpu(test);
  },
  afterEach(this: Context): void {
    const test = this.currentTest;
    if (test?.state !== 'passed') return;
    const cpu = cpuMs.get(test);
    const wall = test.duration ?? 0;
    if (cpu !== undefined && cpu > UNIT_TEST_LIMIT_MS) slow.push(`${test.fullTitle()} (${cpu.toFixed(0)} ms CPU, ${wall} ms wall)`);
    else if (wall > UNIT_TEST_LIMIT_MS) waited.push(`${test.fullTitle()} (${wall} ms wall, ${(cpu ?? 0).toFixed(0)} ms CPU)`);
  },
  afterAll(): void {
    if (waited.length > 0) {
      console.log(
        `\n${waited.length} unit test(s) took over ${UNIT_TEST_LIMIT_MS} ms of wall time but not of CPU time (a busy machine, ` +
          `or a test that waits; not a failure):\n  ${waited.join('\n  ')}`,
      );
    }
    if (slow.length === 0) return;
    throw new Error(
      `${slow.length} unit test(s) used more than ${UNIT_TEST_LIMIT_MS} ms of CPU time (make them faster, or move them ` +
        `to the integration or model suite):\n  ${slow.join('\n  ')}`,
    );
  },
};
