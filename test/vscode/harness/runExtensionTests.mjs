// Runs the extension's mocha suite (test/vscode/extension) inside code-server's real Node extension host, the way
// @vscode/test-web does it: the workbench URL carries a `payload` with extensionDevelopmentPath and
// extensionTestsPath, and the page reports the end through window.codeAutomationExit(code).
// The counts come from inside the host (a JSON file named by LOCKSTEP_VSCODE_RESULT); one tally line is appended.
// usage: node test/vscode/harness/runExtensionTests.mjs [--host 1.100|1.139|oldest|newest] [--suite NAME] [--untrusted 1]
//          [--driver file|sqlite|mariadb|postgres|redis|etcd|git] [--tests NAME,…] [--extension DIR] [--workspace folder|multi-root]
// --untrusted 1: workspace trust on and the folder untrusted (restricted mode); runs only *.untrusted.test.ts, which
//   every other run leaves out.
// --driver: the container is initialised on that driver (MariaDB and PostgreSQL from LOCKSTEP_TEST_DATABASE_URL, Redis
//   from LOCKSTEP_TEST_REDIS_URL, etcd from LOCKSTEP_TEST_ETCD_ENDPOINTS, as scripts/suites/vscode.sh starts them;
//   SQLite is a file in the run folder).
// --tests: only these test files (test/vscode/extension/NAME.test.ts); by default every one but those run per driver.
// --extension: the extension folder to load (default the project; e.g. an unpacked .vsix, to test what ships).
// --workspace multi-root: a .code-workspace with two containers' folders instead of one folder.
// Needs `npm run build` (dist/extension.js). LOCKSTEP_KEEP_RUN=1 keeps the run folder; LOCKSTEP_VSCODE_DEBUG=1 logs all.
import fs from 'node:fs';
import path from 'node:path';
import util from 'node:util';
import { bundleExtensionTests } from './bundleTests.mjs';
import {
  PROJECT_ROOT,
  createRun,
  launchChromium,
  log,
  parseOptions,
  resolveHost,
  startCodeServer,
  trustWorkspaces,
} from './codeServer.mjs';
import { createContainerFixture, createMultiRootWorkspace, fixtureEnvironment } from './fixture.mjs';
import { appendTally } from './tally.mjs';

const options = parseOptions(process.argv.slice(2), {
  host: 'newest',
  suite: '',
  untrusted: '',
  driver: 'file',
  tests: '',
  extension: PROJECT_ROOT,
  workspace: 'folder',
});
const untrusted = options.untrusted === '1';
const timeoutMs = Number(process.env.LOCKSTEP_VSCODE_TEST_TIMEOUT_MS || 360_000); // the whole run; a story of 30 tests with real git pushes takes minutes on a loaded machine
const debug = Boolean(process.env.LOCKSTEP_VSCODE_DEBUG);
// Workbench chatter that says nothing about the extension under test (shown with LOCKSTEP_VSCODE_DEBUG=1).
const NOISE =
  /^(Resolving|Resolved|Creating a socket|\[|Extension host|Updating additional builtin|Ignoring fetching additional builtin|Creation of workbench contribution|ChatSessionStore|Timed out waiting for authentication provider 'github')/;

const host = resolveHost(options.host);
const suite = options.suite || `vscode-ext${untrusted ? '-untrusted' : ''}@${host.name}`;
let counts = { passed: 0, failed: 1, skipped: 0 };
let note;

const run = createRun(`ext${untrusted ? '-untrusted' : ''}-${host.name}`);
if (untrusted) trustWorkspaces(run);
let server,
  browser,
  ok = false;
try {
  if (!fs.existsSync(path.join(PROJECT_ROOT, 'dist/extension.js')))
    throw new Error('dist/extension.js is missing: run npm run build first');
  const testsIndex = await bundleExtensionTests();
  const extension = path.resolve(options.extension);
  if (!fs.existsSync(path.join(extension, 'dist/extension.js'))) throw new Error(`${extension} holds no dist/extension.js`);
  // A real container: bare remote, alice's clone (the workspace), bob's clone, one shared store on the driver asked.
  const store = driverStore(options.driver, run.dir);
  const fixture = withEnvironment(store.env, () => createContainerFixture(run.dir, { driver: store.init }));
  const workspace = options.workspace === 'multi-root' ? createMultiRootWorkspace(run.dir, fixture) : undefined;
  if (!workspace && options.workspace !== 'folder') throw new Error(`--workspace ${options.workspace}: expected folder or multi-root`);
  const resultFile = path.join(run.dir, 'result.json');
  // The extension host inherits code-server's environment: this is how tests get their store, the coworker's
  // clone, and a place to report back.
  server = await startCodeServer(host, run, {
    env: {
      ...fixtureEnvironment(fixture, workspace),
      ...store.env,
      LOCKSTEP_TEST_DRIVER: options.driver,
      LOCKSTEP_VSCODE_RESULT: resultFile,
      // The run's slowdown factor (test/helpers/calibration.ts) under the one name the host's environment keeps.
      ...(process.env.LOCKSTEP_TEST_SLOWDOWN ? { LOCKSTEP_VSCODE_TEST_SLOWDOWN: process.env.LOCKSTEP_TEST_SLOWDOWN } : {}),
      ...(options.tests ? { LOCKSTEP_VSCODE_TESTS: options.tests } : {}),
      ...(untrusted ? { LOCKSTEP_VSCODE_UNTRUSTED: '1' } : {}),
    },
    testPayload: true,
    workspaceTrust: untrusted,
  });
  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://${server.authority}${extension}`],
    ['extensionTestsPath', `vscode-remote://${server.authority}${testsIndex}`],
  ];
  const opened = workspace ? `workspace=${encodeURIComponent(workspace.file)}` : `folder=${encodeURIComponent(fixture.alice)}`;
  const url = `${server.origin}/?${opened}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

  browser = await launchChromium(host, run);
  const page = browser.pages()[0] ?? (await browser.newPage());
  let reportExit;
  const exitCode = new Promise(resolve => {
    reportExit = resolve;
  });
  await page.exposeFunction('codeAutomationExit', code => reportExit(code));
  // The workbench forwards the extension host's console (mocha's spec reporter) through this hook.
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const line = util.format(...(Array.isArray(args) ? args : [args]));
    if (debug || !NOISE.test(line)) console.log(`  ${type === 'info' ? '' : `[${type}] `}${line.split('\n    at ')[0]}`);
  });
  if (debug) page.on('console', message => console.log('[browser]', message.text().slice(0, 500)));
  page.on('pageerror', err => log('page error:', err.message));

  log(
    `opening the workbench on VS Code ${host.name} with the extension in ${path.relative(PROJECT_ROOT, extension) || 'the project'}, ` +
      `a container on the ${options.driver} driver${workspace ? ', multi-root' : ''}`,
  );
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  let timer;
  const code = await Promise.race([
    exitCode,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no test result after ${timeoutMs / 1000} s`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  log(`extension host exited with ${code}`);

  if (!fs.existsSync(resultFile)) throw new Error('the extension host wrote no result file: the test index did not run (see the logs)');
  const result = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  log(`ran inside VS Code ${result.vscode} on Node ${result.node}`);
  counts = {
    passed: result.passed,
    failed: result.failed,
    skipped: result.skipped,
    ...(Array.isArray(result.behaviours) ? { behaviours: result.behaviours } : {}),
    ...(Array.isArray(result.failures) ? { failures: result.failures } : {}),
  };
  if (code !== 0 && counts.failed === 0) {
    counts.failed = 1;
    note = `host exited ${code} with no failed test`;
  }
  if (counts.passed + counts.failed + counts.skipped === 0) {
    counts.failed = 1;
    note = 'the extension host ran zero tests';
  }
  ok = code === 0 && counts.failed === 0;
} catch (err) {
  log('ERROR', err.message);
  note = err.message.split('\n')[0].slice(0, 200);
} finally {
  await browser?.close().catch(() => {});
  await server?.stop();
  if (!ok) log(`logs saved to ${path.relative(PROJECT_ROOT, run.saveLogs())}`);
  run.dispose(Boolean(process.env.LOCKSTEP_KEEP_RUN) || !ok);
}
appendTally({ suite, ...counts, ...(note ? { note } : {}) });
process.exit(ok ? 0 : 1);

/** What `lockstep init --driver` gets for a driver label, and the environment that points at its store. */
function driverStore(driver, dir) {
  const required = name => {
    if (!process.env[name]) throw new Error(`--driver ${driver} needs ${name} (scripts/suites/vscode.sh starts the server and sets it)`);
    return process.env[name];
  };
  switch (driver) {
    case 'file':
    case 'git':
      return { init: driver, env: {} };
    case 'sqlite':
      return { init: 'sql', env: { LOCKSTEP_DATABASE_URL: `sqlite://${dir}/locks.db` } };
    case 'mariadb':
    case 'postgres':
      return { init: 'sql', env: { LOCKSTEP_DATABASE_URL: required('LOCKSTEP_TEST_DATABASE_URL') } };
    case 'redis':
      return { init: 'redis', env: { LOCKSTEP_REDIS_URL: required('LOCKSTEP_TEST_REDIS_URL') } };
    case 'etcd':
      return { init: 'etcd', env: { LOCKSTEP_ETCD_ENDPOINTS: required('LOCKSTEP_TEST_ETCD_ENDPOINTS') } };
    default:
      throw new Error(`--driver ${driver}: expected file, sqlite, mariadb, postgres, redis, etcd or git`);
  }
}

/** Runs `action` with `env` added to this process's environment (the fixture's CLI runs inherit it). */
function withEnvironment(env, action) {
  const saved = Object.fromEntries(Object.keys(env).map(key => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return action();
  } finally {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
  }
}
