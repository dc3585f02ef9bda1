// Helpers for UI tests through Chromium: a workbench with the packaged extension installed, the status bar,
// the command palette (F1), screenshots into test-artifacts/screenshots/, and a tiny runner that tallies.
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, createRun, installExtension, launchChromium, log, startCodeServer } from './codeServer.mjs';
import { createContainerFixture, fixtureEnvironment } from './fixture.mjs';
import { appendTally, keyOf, noteFailure } from './tally.mjs';

export const SCREENSHOTS = path.join(PROJECT_ROOT, 'test-artifacts', 'screenshots');

/**
 * A deadline written for an idle machine, scaled by the run's slowdown factor (LOCKSTEP_TEST_SLOWDOWN, measured by
 * test/helpers/calibration.ts at the start of the run; 1 to 20): the UI tests run beside the other live suites.
 */
export function scaledMs(ms) {
  const factor = Number(process.env.LOCKSTEP_TEST_SLOWDOWN);
  return Math.ceil(ms * (Number.isFinite(factor) ? Math.min(20, Math.max(1, factor)) : 1));
}
const STATUS_BAR = '#workbench\\.parts\\.statusbar';
export const EXTENSION_ID = 'lockstep.lockstep';

/**
 * A code-server with `vsix` installed and a Chromium page on it, opened on `folder` — by default alice's clone of
 * a fresh container (test/vscode/harness/fixture.mjs, as `session.fixture`). `env` reaches the extension host.
 * `settings` are merged into the user settings; `beforeOpen(session)` prepares the fixture before the window opens.
 * `close()` stops everything; the run folder stays when the test failed.
 */
export async function openWorkbench({ host, vsix, label, folder, env, settings, beforeOpen }) {
  const run = createRun(label);
  if (settings) {
    // User settings (never the folder's .vscode/settings.json): merged over the quiet workbench's.
    const file = `${run.paths.userData}/User/settings.json`;
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...settings }, null, 2));
  }
  const session = { run, host, page: undefined, server: undefined, browser: undefined, folder: undefined, fixture: undefined };
  session.close = async (keep = false) => {
    await session.browser?.close().catch(() => {});
    await session.server?.stop();
    if (keep) log(`logs saved to ${path.relative(PROJECT_ROOT, run.saveLogs())}`);
    run.dispose(keep || Boolean(process.env.LOCKSTEP_KEEP_RUN));
  };
  try {
    await installExtension(host, run, vsix);
    if (!folder) session.fixture = createContainerFixture(run.dir);
    session.folder = folder ?? session.fixture.alice;
    await beforeOpen?.(session);
    session.server = await startCodeServer(host, run, { env: env ?? fixtureEnvironment(session.fixture) });
    session.browser = await launchChromium(host, run);
    session.page = session.browser.pages()[0] ?? (await session.browser.newPage());
    await openFolder(session.page, session.server, session.folder);
    return session;
  } catch (err) {
    await session.close(true);
    throw err;
  }
}

/** Opens `folder` in the workbench and waits for the status bar. */
export async function openFolder(page, server, folder) {
  await page.goto(`${server.origin}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded', timeout: scaledMs(60_000) });
  await page.locator('.monaco-workbench').waitFor({ timeout: scaledMs(60_000) });
  await page.locator(STATUS_BAR).waitFor({ timeout: scaledMs(60_000) });
}

/**
 * The status-bar entry that an extension created with createStatusBarItem(itemId). The workbench gives its element
 * the id `<publisher.name>.<itemId>`.
 */
export function statusBarItem(page, extensionId, itemId) {
  return page.locator(`${STATUS_BAR} [id="${extensionId}.${itemId}"]`);
}

/** Lockstep's badge in the status bar. */
export function lockstepBadge(page) {
  return statusBarItem(page, EXTENSION_ID, 'lockstep.status');
}

/** The badge as shown: its text (without the codicon), aria-label, and background against the theme's colours. */
export async function readBadge(page) {
  return lockstepBadge(page).evaluate(item => {
    const themed = variable => {
      const probe = document.createElement('div');
      probe.style.backgroundColor = `var(${variable})`;
      item.parentElement.appendChild(probe); // the theme's variables live on the workbench, not on <body>
      const colour = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return colour;
    };
    const background = getComputedStyle(item).backgroundColor;
    return {
      text: item.textContent?.trim() ?? '',
      label: item.querySelector('[aria-label]')?.getAttribute('aria-label') ?? '',
      icon: [...(item.querySelector('.codicon')?.classList ?? [])].find(c => c.startsWith('codicon-')) ?? '',
      background,
      foreground: getComputedStyle(item.querySelector('a') ?? item).color,
      severity:
        background === themed('--vscode-statusBarItem-errorBackground')
          ? 'error'
          : background === themed('--vscode-statusBarItem-warningBackground')
            ? 'warning'
            : 'normal',
    };
  });
}

/** Waits until the badge's text matches `pattern`; returns readBadge(). The error says what it showed. */
export async function badgeShows(page, pattern, idleTimeoutMs = 20_000) {
  const timeoutMs = scaledMs(idleTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await readBadge(page).catch(() => undefined);
    if (last && pattern.test(last.text)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `the badge did not come to read ${pattern} within ${timeoutMs / 1000} s; it reads ${JSON.stringify(last?.text)} ` +
          `(status bar: ${JSON.stringify(await readStatusBar(page).catch(() => []))})`,
      );
    }
    await page.waitForTimeout(100);
  }
}

/** Every visible status-bar entry as { id, text, label } (for messages and debugging). */
export async function readStatusBar(page) {
  return page.locator(`${STATUS_BAR} .statusbar-item`).evaluateAll(items =>
    items
      .filter(el => el.offsetParent !== null)
      .map(el => ({
        id: el.id,
        text: el.textContent?.trim() ?? '',
        label: el.querySelector('[aria-label]')?.getAttribute('aria-label') ?? '',
      })),
  );
}

/**
 * Runs a command by its palette title ("Lockstep: Show Log") through F1, as a person would. `input`, when given,
 * answers the input box the command opens next: { prompt: text the box shows, answer: what to type }. `opensPrompt`
 * is for a command that opens a prompt the test answers itself (git's askpass): the palette reuses one widget for
 * it, so the wait is for the palette's own text to leave it, not for the widget to hide (which may never be seen).
 */
export async function runCommand(page, title, { input, opensPrompt = false } = {}) {
  await page.locator('.monaco-workbench').click({ position: { x: 640, y: 300 } });
  await page.keyboard.press('F1');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ timeout: scaledMs(20_000) });
  await box.pressSequentially(title, { delay: 10 });
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: title })
    .first()
    .waitFor({ timeout: scaledMs(20_000) });
  await page.keyboard.press('Enter');
  if (input) {
    await page.locator('.quick-input-widget', { hasText: input.prompt }).waitFor({ timeout: scaledMs(20_000) });
    await box.fill(input.answer);
    await page.keyboard.press('Enter');
  }
  if (opensPrompt) {
    await page.waitForFunction(
      text => {
        const field = document.querySelector('.quick-input-widget:not(.quick-input-widget-closing) input');
        return !field || field.offsetParent === null || !field.value.startsWith(`>${text}`);
      },
      title,
      { timeout: scaledMs(20_000) },
    );
    return;
  }
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: scaledMs(20_000) });
}

/** Saves a screenshot (or of one locator) as test-artifacts/screenshots/NAME.png and returns its path. */
export async function screenshot(target, name, options = {}) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await target.screenshot({ ...options, path: file });
  log(`screenshot ${path.relative(PROJECT_ROOT, file)}`);
  return file;
}

/** The left part of the status bar, where the badge sits, with a strip of the window above it for context. */
export async function badgeScreenshot(page, name) {
  const bar = await page.locator(STATUS_BAR).boundingBox();
  if (!bar) throw new Error('the status bar is not visible');
  const above = 40;
  return screenshot(page, name, { clip: { x: 0, y: bar.y - above, width: 520, height: bar.height + above } });
}

/**
 * Runs UI tests one after another and appends one tally line for them. A test is { name, run(): Promise<void> };
 * a failure is printed and counted, never thrown, so every test runs. Returns true when all passed.
 */
export async function runUiTests(suite, tests) {
  let passed = 0,
    failed = 0;
  const behaviours = new Set();
  const failures = [];
  for (const test of tests) {
    const started = Date.now();
    behaviours.add(keyOf('VS Code UI', test.name));
    try {
      await test.run();
      passed++;
      console.log(`  ✔ ${test.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (err) {
      failed++;
      noteFailure(failures, [suite, test.name], err);
      console.log(
        `  ✘ ${test.name}\n    ${String(err?.stack ?? err)
          .split('\n')
          .slice(0, 6)
          .join('\n    ')}`,
      );
    }
  }
  appendTally({ suite, passed, failed, skipped: 0, behaviours: [...behaviours].sort(), failures });
  return failed === 0;
}
