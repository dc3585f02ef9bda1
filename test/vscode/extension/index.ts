// Entry point that VS Code's extension host calls (extensionTestsPath): runs every *.test.js bundled beside this
// file (or, in the untrusted run, every *.untrusted.test.js) with mocha's tdd interface, and writes the counts to
// $LOCKSTEP_VSCODE_RESULT for the runner outside.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 20_000, reporter: 'spec', forbidOnly: true });
  if (process.env.LOCKSTEP_VSCODE_GREP) mocha.grep(process.env.LOCKSTEP_VSCODE_GREP);
  // The untrusted run (runExtensionTests.mjs --untrusted 1) runs the *.untrusted.test.js files, and only those.
  const untrusted = process.env.LOCKSTEP_VSCODE_UNTRUSTED === '1';
  const files = fs.readdirSync(__dirname).filter(f => f.endsWith('.test.js') && f.endsWith('.untrusted.test.js') === untrusted).sort();
  for (const file of files) mocha.addFile(path.join(__dirname, file));

  const stats = await new Promise<Mocha.Stats>((resolve, reject) => {
    try {
      const runner = mocha.run(() => resolve(runner.stats ?? { passes: 0, failures: 1, pending: 0 } as Mocha.Stats));
    } catch (err) {
      reject(err);
    }
  });
  const counts = { passed: stats.passes, failed: stats.failures, skipped: stats.pending, vscode: vscode.version, node: process.version };
  if (process.env.LOCKSTEP_VSCODE_RESULT) fs.writeFileSync(process.env.LOCKSTEP_VSCODE_RESULT, JSON.stringify(counts) + '\n');
  if (counts.failed > 0) throw new Error(`${counts.failed} extension test(s) failed`);
  // A run that found no test file, or no test, is not a pass.
  if (files.length === 0 || counts.passed + counts.failed + counts.skipped === 0) throw new Error(`the extension host ran zero tests (${files.length} test files)`);
}
