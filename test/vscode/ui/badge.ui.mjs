// UI test through Chromium on the packaged extension, in one workbench opened on alice's clone of a fresh container
// (bare remote, bob's clone, shared file store). The badge reads Free; the palette's "Lockstep: Acquire Lock" turns it
// to Held by me; "Lockstep: Show Log" opens the log; then the backend (bob and the operator through the CLI, the store
// taken away, .lockstep.json removed) drives it through HOLDER SILENT, Stale, Offline and Not initialised, with the
// background colour each must have; lockstep.showBadge off hides it. A screenshot of every state goes to test-artifacts/screenshots/badge-<state>.png.
// usage: node test/vscode/ui/badge.ui.mjs --vsix FILE [--host 1.100|1.139|oldest|newest] [--suite NAME]
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { log, parseOptions, resolveHost } from '../harness/codeServer.mjs';
import { lapsingGrant, lockstep } from '../harness/fixture.mjs';
import {
  badgeScreenshot,
  badgeShows,
  lockstepBadge,
  openWorkbench,
  readStatusBar,
  runCommand,
  runUiTests,
  scaledMs,
  screenshot,
} from '../harness/ui.mjs';

const options = parseOptions(process.argv.slice(2), { host: 'newest', vsix: '', suite: '' });
if (!options.vsix) throw new Error('--vsix FILE is required (npm run package builds one)');
const host = resolveHost(options.host);
const newest = resolveHost('newest').name === host.name;
const suite = options.suite || `vscode-ui:badge@${host.name}`;
const shot = (page, state) => badgeScreenshot(page, `badge-${state}${newest ? '' : `@${host.name}`}`);

let session;
const opened = openWorkbench({ host, vsix: path.resolve(options.vsix), label: `ui-badge-${host.name}` }).then(s => {
  session = s;
  return s;
});
opened.catch(() => undefined);
const page = async () => (await opened).page;
const as = (who, args) =>
  lockstep(who === 'alice' ? session.fixture.alice : session.fixture.bob, args, {
    store: session.fixture.store,
    ...(who === 'ops' ? { identity: 'ops@example.com' } : {}),
  });
/** A grant in `who`'s clone with the shortest lease (60 s), dated so that it runs out in a second (lapsingGrant.ts). */
const lapsing = who => lapsingGrant(who === 'alice' ? session.fixture.alice : session.fixture.bob, { store: session.fixture.store });

const ok = await runUiTests(suite, [
  {
    name: 'the badge reads Free in a fresh container, on the left, with its codicon',
    async run() {
      const p = await page();
      try {
        await lockstepBadge(p).waitFor({ timeout: scaledMs(60_000) });
      } catch (err) {
        throw new Error(`no Lockstep item in the status bar; it shows ${JSON.stringify(await readStatusBar(p))}`, { cause: err });
      }
      const badge = await badgeShows(p, /^Free$/);
      assert.equal(badge.icon, 'codicon-unlock');
      assert.equal(badge.severity, 'normal');
      assert.equal(badge.label, 'Lockstep: Free');
      assert.ok(await lockstepBadge(p).evaluate(el => el.classList.contains('left')), 'the item sits on the left');
      await shot(p, 'free');
    },
  },
  {
    name: '"Lockstep: Show Log" from the palette opens the Lockstep log',
    async run() {
      const p = await page();
      await runCommand(p, 'Lockstep: Show Log');
      await p
        .locator('.part.panel .monaco-editor .view-lines')
        .filter({ hasText: 'Lockstep activated' })
        .waitFor({ timeout: scaledMs(20_000) });
      await screenshot(p, `show-log${newest ? '' : `@${host.name}`}`);
      await p.keyboard.press('Control+J'); // close the panel again
    },
  },
  {
    name: 'the palette\'s "Lockstep: Acquire Lock" turns it to Held by me #1 with the time left',
    async run() {
      const p = await page();
      const free = await badgeShows(p, /^Free$/);
      await runCommand(p, 'Lockstep: Acquire Lock');
      const badge = await badgeShows(p, /^Held by me #1 · \d+s$/);
      // Held by me looks different at a glance: its own icon, and its own foreground from the theme.
      assert.equal(badge.icon, 'codicon-pass-filled');
      assert.equal(badge.severity, 'normal', 'not an error or warning colour');
      assert.notEqual(badge.foreground, free.foreground, "the holder's badge has its own colour");
      assert.equal(as('ops', ['status']).holder.identity, 'alice@example.com');
      await shot(p, 'held-by-me');
      // Nothing to push: release from the palette, and it is free again.
      await runCommand(p, 'Lockstep: Release Lock');
      await badgeShows(p, /^Free$/);
    },
  },
  {
    name: "HOLDER SILENT (warning background) when bob's lease runs out",
    async run() {
      const p = await page();
      lapsing('bob');
      const badge = await badgeShows(p, /^HOLDER SILENT$/);
      assert.equal(badge.icon, 'codicon-warning');
      assert.equal(badge.severity, 'warning', `background ${badge.background}`);
      await shot(p, 'holder-silent');
      as('ops', ['clear', '--reason', 'bob went quiet in a UI test']);
      // The clear leaves the caution mark, in the badge's own words (its icon has no text).
      await badgeShows(p, /^Free · +caution$/);
    },
  },
  {
    name: "Stale grant — push blocked (error background) after alice's lease expires and bob takes over",
    async run() {
      const p = await page();
      const { grant } = lapsing('alice');
      await badgeShows(p, /^Stale grant/);
      as('bob', ['acquire']);
      const badge = await badgeShows(p, new RegExp(`^Stale grant #${grant} — push blocked · +caution$`));
      assert.equal(badge.icon, 'codicon-error');
      assert.equal(badge.severity, 'error', `background ${badge.background}`);
      await shot(p, 'stale');
      await screenshot(p, `stale-page${newest ? '' : `@${host.name}`}`);
    },
  },
  {
    name: 'Offline (error background) when the store is unreachable, back by itself when it returns',
    async run() {
      const p = await page();
      const { store } = session.fixture;
      fs.renameSync(store, `${store}.away`);
      fs.writeFileSync(store, 'not a folder\n');
      try {
        await runCommand(p, 'Lockstep: Refresh Lock Status');
        const badge = await badgeShows(p, /^Offline$/);
        assert.equal(badge.icon, 'codicon-debug-disconnect');
        assert.equal(badge.severity, 'error', `background ${badge.background}`);
        await shot(p, 'offline');
      } finally {
        fs.rmSync(store);
        fs.renameSync(`${store}.away`, store);
      }
      await badgeShows(p, /^Stale grant/);
    },
  },
  {
    name: 'Not initialised when the folder has no .lockstep.json; back when the file returns',
    async run() {
      const p = await page();
      const file = path.join(session.fixture.alice, '.lockstep.json');
      const kept = fs.readFileSync(file);
      fs.rmSync(file);
      try {
        const badge = await badgeShows(p, /^Lockstep: not initialised$/);
        assert.equal(badge.icon, 'codicon-circle-slash');
        await shot(p, 'not-initialised');
      } finally {
        fs.writeFileSync(file, kept);
      }
      await badgeShows(p, /^Stale grant/);
      assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: session.fixture.alice, encoding: 'utf8' }), '');
    },
  },
  {
    name: 'lockstep.showBadge off (its box in the Settings editor) takes the badge out of the status bar; back on, it returns',
    async run() {
      const p = await page();
      await lockstepBadge(p).waitFor({ state: 'visible', timeout: scaledMs(20_000) });
      await runCommand(p, 'Preferences: Open User Settings');
      const editor = p.locator('.settings-editor');
      await editor.waitFor({ timeout: scaledMs(20_000) });
      await p.keyboard.type('lockstep.showBadge', { delay: 10 });
      // The search filters after a moment: wait for Lockstep's own box, not whichever box comes first.
      const box = editor.locator('.setting-item-bool', { hasText: 'Show Badge' }).locator('.setting-value-checkbox');
      await box.waitFor({ timeout: scaledMs(20_000) });
      await box.click();
      await lockstepBadge(p).waitFor({ state: 'hidden', timeout: scaledMs(20_000) });
      await box.click();
      await lockstepBadge(p).waitFor({ state: 'visible', timeout: scaledMs(20_000) });
      await badgeShows(p, /^Stale grant/);
      await p.keyboard.press('Escape');
      if (await editor.isVisible()) await runCommand(p, 'View: Close Editor');
      await editor.waitFor({ state: 'hidden', timeout: scaledMs(20_000) });
    },
  },
  {
    name: '"Lockstep: Show Lock Page" renders holder, grant, queue and audit trail in one webview',
    async run() {
      const p = await page();
      await runCommand(p, 'Lockstep: Show Lock Page');
      // A webview is an iframe inside an iframe; the page's own script renders into #app.
      const view = p.frameLocator('iframe.webview').frameLocator('iframe#active-frame');
      await view.locator('h2', { hasText: 'Audit trail' }).waitFor({ timeout: scaledMs(30_000) });
      await view.getByText('Holder: bob@example.com').waitFor({ timeout: scaledMs(10_000) });
      await view.locator('h1', { hasText: 'Stale grant' }).waitFor({ timeout: scaledMs(10_000) });
      const audit = await view.locator('table.audit tr').count();
      assert.ok(audit >= 3, `the audit trail lists the transitions so far (${audit} rows)`);
      await screenshot(p, `lock-page${newest ? '' : `@${host.name}`}`);
    },
  },
]);
if (session) await session.close(!ok);
else log('the workbench did not open (its logs were saved)');
process.exit(ok ? 0 : 1);
