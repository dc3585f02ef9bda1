// `npm run test:electron`: the same in-host suite (test/vscode/extension) in desktop VS Code through
// @vscode/test-electron, for machines that can download VS Code (or have one: LOCKSTEP_VSCODE_EXECUTABLE).
// Where VS Code cannot be had it says so loudly, exits 0 and appends NO tally line: a skipped run counts nothing.
// On a machine without a display run it under xvfb-run. Env: LOCKSTEP_ELECTRON_VSCODE_VERSION (default stable).
// Options as runExtensionTests.mjs's: --workspace multi-root (two containers' folders) and --tests NAME,….
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleExtensionTests } from './bundleTests.mjs';
import { PROJECT_ROOT, log, parseOptions } from './codeServer.mjs';
import { createContainerFixture, createMultiRootWorkspace, fixtureEnvironment } from './fixture.mjs';
import { appendTally } from './tally.mjs';

function skip(reason) {
  const bar = '!'.repeat(100);
  console.log(
    `\n${bar}\n!! test:electron SKIPPED — no desktop VS Code on this machine.\n!! Why: ${reason}\n` +
      '!! These machines reach only the npm registry and Debian (VS Code downloads from update.code.visualstudio.com).\n' +
      '!! The same suite runs in a real VS Code through code-server: npm run test:vscode (scripts/suites/vscode.sh).\n' +
      `!! To run it here anyway: LOCKSTEP_VSCODE_EXECUTABLE=/path/to/code npm run test:electron\n${bar}\n`,
  );
  process.exit(0);
}

const { downloadAndUnzipVSCode, runTests } = await import('@vscode/test-electron').catch(err =>
  skip(`@vscode/test-electron does not load (${err.message})`),
);
if (!fs.existsSync(path.join(PROJECT_ROOT, 'dist/extension.js'))) {
  console.error('dist/extension.js is missing: run npm run build first');
  process.exit(1);
}

const options = parseOptions(process.argv.slice(2), { workspace: 'folder', tests: '' });
const version = process.env.LOCKSTEP_ELECTRON_VSCODE_VERSION || 'stable';
let vscodeExecutablePath = process.env.LOCKSTEP_VSCODE_EXECUTABLE;
if (!vscodeExecutablePath) {
  try {
    vscodeExecutablePath = await downloadAndUnzipVSCode({ version, cachePath: path.join(PROJECT_ROOT, '.vscode-test'), timeout: 15_000 });
  } catch (err) {
    skip(`downloading VS Code ${version} failed: ${String(err?.message ?? err).split('\n')[0]}`);
  }
}

const run = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-electron-'));
const resultFile = path.join(run, 'result.json');
const suite = `vscode-electron@${version}${options.workspace === 'multi-root' ? ':multi-root' : ''}`;
let ok = false;
try {
  const fixture = createContainerFixture(run);
  const workspace = options.workspace === 'multi-root' ? createMultiRootWorkspace(run, fixture) : undefined;
  const extensionTestsPath = await bundleExtensionTests();
  log(`running the extension tests in ${vscodeExecutablePath}`);
  await runTests({
    vscodeExecutablePath,
    extensionDevelopmentPath: PROJECT_ROOT,
    extensionTestsPath,
    launchArgs: [
      workspace?.file ?? fixture.alice,
      '--disable-extensions',
      '--disable-workspace-trust',
      '--user-data-dir',
      path.join(run, 'user-data'),
    ],
    extensionTestsEnv: {
      ...fixtureEnvironment(fixture, workspace),
      LOCKSTEP_VSCODE_RESULT: resultFile,
      ...(options.tests ? { LOCKSTEP_VSCODE_TESTS: options.tests } : {}),
    },
  });
  ok = true;
} catch (err) {
  log('ERROR', err?.message ?? err);
} finally {
  const counts = fs.existsSync(resultFile) ? JSON.parse(fs.readFileSync(resultFile, 'utf8')) : { passed: 0, failed: 1, skipped: 0 };
  appendTally({ suite, passed: counts.passed, failed: counts.failed, skipped: counts.skipped });
  ok = ok && counts.failed === 0;
  fs.rmSync(run, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
