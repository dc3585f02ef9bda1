// Helpers for UI tests through Chromium: a workbench with the packaged extension installed, the status bar,
// the command palette (F1), screenshots into test-artifacts/screenshots/, and a tiny runner that tallies.
import fs from 'node:fs';
import path from 'node:path';
import {
  PROJECT_ROOT, createLockstepFolder, createRun, installExtension, launchChromium, log, startCodeServer,
} from './codeServer.mjs';
import { appendTally } from './tally.mjs';

export const SCREENSHOTS = path.join(PROJECT_ROOT, 'test-artifacts', 'screenshots');
const STATUS_BAR = '#workbench\\.parts\\.statusbar';

/**
 * A code-server with `vsix` installed, a Chromium page on it, and a Lockstep folder (unless `folder` is given).
 * `env` reaches the extension host. `close()` stops everything; the run folder stays when the test failed.
 */
export async function openWorkbench({ host, vsix, label, folder, env = {} }) {
  const run = createRun(label);
  const session = { run, host, page: undefined, server: undefined, browser: undefined, folder: undefined };
  session.close = async (keep = false) => {
    await session.browser?.close().catch(() => {});
    await session.server?.stop();
    if (keep) log(`logs saved to ${path.relative(PROJECT_ROOT, run.saveLogs())}`);
    run.dispose(keep || Boolean(process.env.LOCKSTEP_KEEP_RUN));
  };
  try {
    await installExtension(host, run, vsix);
    session.folder = folder ?? createLockstepFolder(run.dir);
    session.server = await startCodeServer(host, run, { env: { LOCKSTEP_PATH: path.join(run.dir, 'store'), ...env } });
    session.browser = await launchChromium(host, run);
    session.page = session.browser.pages()[0] ?? await session.browser.newPage();
    await openFolder(session.page, session.server, session.folder);
    return session;
  } catch (err) {
    await session.close(true);
    throw err;
  }
}

/** Opens `folder` in the workbench and waits for the status bar. */
export async function openFolder(page, server, folder) {
  await page.goto(`${server.origin}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator(STATUS_BAR).waitFor({ timeout: 60_000 });
}

/**
 * The status-bar entry that an extension created with createStatusBarItem(itemId). The workbench gives its element
 * the id `<publisher.name>.<itemId>`.
 */
export function statusBarItem(page, extensionId, itemId) {
  return page.locator(`${STATUS_BAR} [id="${extensionId}.${itemId}"]`);
}

/** Every visible status-bar entry as { id, text, label } (for messages and debugging). */
export async function readStatusBar(page) {
  return page.locator(`${STATUS_BAR} .statusbar-item`).evaluateAll(items => items
    .filter(el => el.offsetParent !== null)
    .map(el => ({ id: el.id, text: el.textContent?.trim() ?? '', label: el.querySelector('[aria-label]')?.getAttribute('aria-label') ?? '' })));
}

/** Runs a command by its palette title ("Lockstep: Show Log") through F1, as a person would. */
export async function runCommand(page, title) {
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 300 } });
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 20_000 });
  await input.pressSequentially(title, { delay: 10 });
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 20_000 });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 20_000 });
}

/** Saves a screenshot (or of one locator) as test-artifacts/screenshots/NAME.png and returns its path. */
export async function screenshot(target, name) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await target.screenshot({ path: file });
  log(`screenshot ${path.relative(PROJECT_ROOT, file)}`);
  return file;
}

/**
 * Runs UI tests one after another and appends one tally line for them. A test is { name, run(): Promise<void> };
 * a failure is printed and counted, never thrown, so every test runs. Returns true when all passed.
 */
export async function runUiTests(suite, tests) {
  let passed = 0, failed = 0;
  for (const test of tests) {
    const started = Date.now();
    try {
      await test.run();
      passed++;
      console.log(`  ✔ ${test.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (err) {
      failed++;
      console.log(`  ✘ ${test.name}\n    ${String(err?.stack ?? err).split('\n').slice(0, 6).join('\n    ')}`);
    }
  }
  appendTally({ suite, passed, failed, skipped: 0 });
  return failed === 0;
}
