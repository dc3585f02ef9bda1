// UI test through Chromium: the lock you can see and feel, in one workbench on alice's clone of a container with a
// week of real history (seedWeek.ts: real transitions, only the clock injected) and bob holding the lock now.
// With lockstep.whileLockedByOthers: readOnly (a user setting), typing into a file of the container changes nothing
// and the explanation names bob; the lock page draws the week as a timeline with a tooltip per bar and a text
// alternative, and the audit table has column headers; the first-day walkthrough opens, and its server-guard step
// ticks itself when the guard is installed in the shared remote. Screenshots: readonly-refusal.png, lock-page-timeline.png, walkthrough.png.
// usage: node test/vscode/ui/seeAndFeel.ui.mjs --vsix FILE [--host 1.100|1.139|oldest|newest] [--suite NAME]
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT, parseOptions, resolveHost } from '../harness/codeServer.mjs';
import { fixtureEnvironment, lockstep } from '../harness/fixture.mjs';
import { openWorkbench, runCommand, runUiTests, scaledMs, screenshot } from '../harness/ui.mjs';

const options = parseOptions(process.argv.slice(2), { host: 'newest', vsix: '', suite: '' });
if (!options.vsix) throw new Error('--vsix FILE is required (npm run package builds one)');
const host = resolveHost(options.host);
const suffix = resolveHost('newest').name === host.name ? '' : `@${host.name}`;
const suite = options.suite || `vscode-ui:see-and-feel@${host.name}`;

let session;
const opened = openWorkbench({
  host,
  vsix: path.resolve(options.vsix),
  label: `ui-see-${host.name}`,
  settings: { 'lockstep.whileLockedByOthers': 'readOnly', 'lockstep.readOnlyExclude': ['notes/**'] },
  beforeOpen: ({ fixture }) => {
    const env = { ...process.env, ...fixtureEnvironment(fixture) };
    execFileSync(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'test/vscode/ui/seedWeek.ts'), fixture.bob], {
      cwd: PROJECT_ROOT,
      env,
      stdio: 'inherit',
    });
    // An hour's lease: the page must read Held by bob however long the workbench takes to start on a busy machine.
    const held = lockstep(fixture.bob, ['acquire', '--ttl', '3600'], { store: fixture.store });
    if (!held.ok) throw new Error(`bob's acquire failed: ${JSON.stringify(held)}`);
    lockstep(fixture.bob, ['petition'], { store: fixture.store, identity: 'carol@example.com' });
  },
}).then(s => {
  session = s;
  return s;
});
opened.catch(() => undefined);
const page = async () => (await opened).page;

/** Opens a quick input with `key` (Control+P, F1), types `text` and chooses the first row that shows `row`. */
async function quickPick(p, key, text, row = text) {
  const box = p.locator('.quick-input-widget input');
  if (key) await p.keyboard.press(key);
  await box.waitFor({ timeout: scaledMs(20_000) });
  await box.pressSequentially(text, { delay: 10 });
  await p
    .locator('.quick-input-list .monaco-list-row', { hasText: row })
    .first()
    .waitFor({ timeout: scaledMs(20_000) });
  await p.keyboard.press('Enter');
}

/** The lock page's document: the webview's outer iframe, then its active frame. */
const lockPage = p => p.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');

const ok = await runUiTests(suite, [
  {
    name: 'typing into a file of the container while bob holds the lock changes nothing, and says why',
    async run() {
      const p = await page();
      await quickPick(p, 'Control+P', 'greeting.ts');
      const toast = p.locator('.notification-toast', { hasText: 'Read-only: bob@example.com holds the lock' });
      await toast.waitFor({ timeout: scaledMs(20_000) });
      await toast.getByRole('button', { name: 'Petition' }).waitFor({ timeout: scaledMs(5_000) });
      const lines = p.locator('.editor-instance .view-lines').first();
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText(), the text as shown, not the DOM property
      const before = await lines.innerText();
      await lines.click();
      await p.keyboard.type('typed while bob holds it');
      // VS Code's own refusal appears at the cursor.
      await p.locator('.monaco-editor-overlaymessage', { hasText: /read-only/i }).waitFor({ timeout: scaledMs(10_000) });
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText(), as above
      assert.equal(await lines.innerText(), before, 'the text did not change');
      assert.equal(await p.locator('.tab.active.dirty').count(), 0, 'the editor is not dirty');
      await screenshot(p, `readonly-refusal${suffix}`);
    },
  },
  {
    name: 'the lock page draws the week: a bar per grant with a tooltip, the silent parts, the waits, words, audit headers',
    async run() {
      const p = await page();
      await p
        .locator('.notifications-toasts .codicon-notifications-clear-all, .notification-toast .codicon-close')
        .first()
        .click()
        .catch(() => undefined);
      await runCommand(p, 'Lockstep: Show Lock Page');
      const doc = lockPage(p);
      const chart = doc.locator('svg.timeline-chart');
      await chart.waitFor({ timeout: scaledMs(30_000) });
      // Nine seeded grants and bob's, now: ten bars; dana's cleared grant and bob's taken-over one were silent.
      await doc
        .locator('rect.bar')
        .nth(9)
        .waitFor({ timeout: scaledMs(10_000) });
      assert.equal(await doc.locator('rect.bar').count(), 10);
      assert.equal(await doc.locator('rect.bar-cleared').count(), 1);
      assert.equal(await doc.locator('rect.bar-expired').count(), 1);
      assert.equal(await doc.locator('rect.bar-holding').count(), 1);
      assert.equal(await doc.locator('rect.silent').count(), 2);
      assert.equal(await doc.locator('rect.wait').count(), 3, 'bob and carol waited, carol waits now');
      const tooltip = await doc.locator('rect.bar-cleared title').textContent();
      assert.match(tooltip, /^Grant #4: dana@example\.com, from .+, silent from .+, cleared by an operator .+\.$/);
      assert.deepEqual(await doc.locator('table.audit thead th').allTextContents(), ['Time', 'Grant', 'Who', 'Action', 'Detail']);
      await doc.locator('details summary').click();
      assert.equal(await doc.locator('details li').count(), 13);
      await chart.scrollIntoViewIfNeeded();
      await screenshot(p, `lock-page-timeline${suffix}`);
      // The week's activity spans the week: 7 days is pressed. 24 h zooms to what the last day holds, hour by hour.
      assert.equal(await doc.locator('.span-switch button[data-span="week"]').getAttribute('aria-pressed'), 'true');
      await doc.locator('.span-switch button[data-span="day"]').click();
      await doc.locator('.span-switch button[data-span="day"][aria-pressed="true"]').waitFor({ timeout: scaledMs(10_000) });
      const dayBars = await doc.locator('rect.bar').count();
      assert.ok(dayBars >= 1 && dayBars < 10, `the last 24 hours show fewer grants than the week (${dayBars})`);
      assert.equal(await doc.locator('rect.bar-holding').count(), 1, "bob's grant, now");
      assert.match(await doc.locator('text.axis').first().textContent(), /\d{1,2}:\d\d/);
      await screenshot(p, `lock-page-timeline-day${suffix}`);
    },
  },
  {
    name: 'the first-day walkthrough opens; installing the server guard on the shared remote ticks its step',
    async run() {
      const p = await page();
      // The palette's "Welcome: Open Walkthrough..." asks which walkthrough in a second quick pick.
      await p.locator('.monaco-workbench').click({ position: { x: 640, y: 300 } });
      await quickPick(p, 'F1', 'Welcome: Open Walkthrough', 'Open Walkthrough');
      await p
        .locator('.quick-input-list .monaco-list-row', { hasText: 'Lockstep: your first day' })
        .first()
        .waitFor({ timeout: scaledMs(20_000) });
      await quickPick(p, undefined, 'Lockstep', 'Lockstep: your first day');
      const steps = p.locator('.getting-started-step');
      await p.locator('.gettingStartedContainer', { hasText: 'Lockstep: your first day' }).waitFor({ timeout: scaledMs(20_000) });
      await steps.first().waitFor({ timeout: scaledMs(20_000) });
      // The shared remote gets its server guard while the walkthrough is open: that step ticks by itself.
      const step = id => p.locator(`.getting-started-step[data-step-id$="#${id}"]`);
      assert.equal(await step('serverGuard').getAttribute('aria-checked'), 'false');
      const installed = lockstep(session.fixture.remote, ['hooks', 'install', '--server'], { store: session.fixture.store });
      assert.equal(installed.ok, true);
      await p.locator('.getting-started-step[data-step-id$="#serverGuard"][aria-checked="true"]').waitFor({ timeout: scaledMs(20_000) });
      await screenshot(p, `walkthrough${suffix}`);
    },
  },
]);
await session?.close(!ok);
process.exit(ok ? 0 : 1);
