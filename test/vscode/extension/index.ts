// Entry point that VS Code's extension host calls (extensionTestsPath): runs the *.test.js bundled beside this file
// with mocha's tdd interface, and writes the counts to $LOCKSTEP_VSCODE_RESULT for the runner outside: counted as every
// tally counts (scripts/test-counts.cjs: a test a failed hook kept from running is failed; the behaviours that ran, as
// title hashes, so the same test on both hosts counts once).
// LOCKSTEP_VSCODE_TESTS (the runner's --tests) names the files to run; without it, every file but those that need a
// workspace of their own (ON_REQUEST: a container per driver, a multi-root workspace). The untrusted run
// (LOCKSTEP_VSCODE_UNTRUSTED=1) runs the *.untrusted.test.js files, and only those; every other run leaves them out.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { HOST_SLOWDOWN_ENV, slowdown } from '../../helpers/calibration';
import { mochaHooks } from '../../helpers/loadScaling';

const ON_REQUEST = ['drivers', 'multiRoot'];

interface RunCounts {
  passed: number;
  failed: number;
  skipped: number;
  notRun: number;
  behaviours: string[];
}
const { countRun, noteFailure } = require('../../../scripts/test-counts.cjs') as {
  countRun(root: Mocha.Suite, failedHooks: Mocha.Runnable[], other: number): RunCounts;
  noteFailure(list: string[], titlePath: string[], err: unknown): void;
};

export async function run(): Promise<void> {
  // Deadlines hold on a loaded machine as in every other suite: mocha's timeouts scaled by the root hook, and
  // until()'s deadlines (each test file is a bundle of its own) by the factor left here for them.
  process.env[HOST_SLOWDOWN_ENV] = String(slowdown());
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 20_000, reporter: 'spec', forbidOnly: true, rootHooks: mochaHooks });
  if (process.env.LOCKSTEP_VSCODE_GREP) mocha.grep(process.env.LOCKSTEP_VSCODE_GREP);
  const untrusted = process.env.LOCKSTEP_VSCODE_UNTRUSTED === '1';
  const named = process.env.LOCKSTEP_VSCODE_TESTS?.split(',')
    .map(n => n.trim())
    .filter(Boolean);
  const files = fs
    .readdirSync(__dirname)
    .filter(f => f.endsWith('.test.js') && f.endsWith('.untrusted.test.js') === untrusted)
    .filter(
      f => untrusted || (named ? named.includes(f.slice(0, -'.test.js'.length)) : !ON_REQUEST.includes(f.slice(0, -'.test.js'.length))),
    )
    .sort();
  if (named && !untrusted && files.length !== named.length)
    throw new Error(`LOCKSTEP_VSCODE_TESTS names ${named.join(', ')}; found ${files.join(', ') || 'none of them'}`);
  for (const file of files) mocha.addFile(path.join(__dirname, file));

  const failures: string[] = [];
  const run = await new Promise<RunCounts>((resolve, reject) => {
    try {
      const failedHooks: Mocha.Runnable[] = [];
      let other = 0;
      const runner = mocha.run(() => resolve(countRun(runner.suite, failedHooks, other)));
      runner.on('fail', (runnable: Mocha.Runnable & { type?: string }, err: unknown) => {
        noteFailure(failures, runnable.titlePath(), err);
        if (runnable.type === 'hook') failedHooks.push(runnable);
        else if (runnable.type !== 'test') other++;
      });
    } catch (err) {
      reject(err);
    }
  });
  const counts = {
    passed: run.passed,
    failed: run.failed,
    skipped: run.skipped,
    behaviours: run.behaviours,
    ...(failures.length > 0 ? { failures } : {}),
    vscode: vscode.version,
    node: process.version,
  };
  if (process.env.LOCKSTEP_VSCODE_RESULT) fs.writeFileSync(process.env.LOCKSTEP_VSCODE_RESULT, `${JSON.stringify(counts)}\n`);
  if (counts.failed > 0) throw new Error(`${counts.failed} extension test(s) failed`);
  // A run that found no test file, or no test, is not a pass.
  if (files.length === 0 || counts.passed + counts.failed + counts.skipped === 0)
    throw new Error(`the extension host ran zero tests (${files.length} test files)`);
}
