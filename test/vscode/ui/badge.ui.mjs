// UI test through Chromium on the packaged extension: in a folder with .lockstep.json the status bar shows the
// Lockstep item, and "Lockstep: Show Log" from the palette opens the Lockstep log. Screenshots of both.
// usage: node test/vscode/ui/badge.ui.mjs --vsix FILE [--host 1.100|1.139|oldest|newest] [--suite NAME]
import assert from 'node:assert/strict';
import path from 'node:path';
import { log, parseOptions, resolveHost } from '../harness/codeServer.mjs';
import { openWorkbench, readStatusBar, runCommand, runUiTests, screenshot, statusBarItem } from '../harness/ui.mjs';

const options = parseOptions(process.argv.slice(2), { host: 'newest', vsix: '', suite: '' });
if (!options.vsix) throw new Error('--vsix FILE is required (npm run package builds one)');
const host = resolveHost(options.host);
const suite = options.suite || `vscode-ui:badge@${host.name}`;

const ok = await runUiTests(suite, [{
  name: 'the status bar shows Lockstep in a folder with .lockstep.json; "Lockstep: Show Log" opens its log',
  async run() {
    const session = await openWorkbench({ host, vsix: path.resolve(options.vsix), label: `ui-${host.name}` });
    let passed = false;
    try {
      const { page } = session;
      const badge = statusBarItem(page, 'lockstep.lockstep', 'lockstep.status');
      try {
        await badge.waitFor({ timeout: 60_000 });
      } catch (err) {
        throw new Error(`no Lockstep item in the status bar; it shows ${JSON.stringify(await readStatusBar(page))}`, { cause: err });
      }
      // Which state it shows belongs to the badge-state tests; here: it is there, reads Lockstep, has its codicon.
      assert.match((await badge.textContent())?.trim() ?? '', /^Lockstep\b/);
      assert.equal(await badge.locator('.codicon').count(), 1, 'the item shows one codicon');
      assert.ok(await badge.evaluate(el => el.classList.contains('left')), 'the item sits on the left');
      await screenshot(page, `badge-${host.name}`);
      await screenshot(page.locator('#workbench\\.parts\\.statusbar'), `badge-statusbar-${host.name}`);

      await runCommand(page, 'Lockstep: Show Log');
      // The Output panel opens on the Lockstep channel, whose first line is the activation message.
      const output = page.locator('.part.panel .monaco-editor .view-lines');
      await output.filter({ hasText: 'Lockstep activated' }).waitFor({ timeout: 20_000 });
      log('the Output panel shows the Lockstep log');
      await screenshot(page, `show-log-${host.name}`);
      passed = true;
    } finally {
      await session.close(!passed);
    }
  },
}]);
process.exit(ok ? 0 : 1);
