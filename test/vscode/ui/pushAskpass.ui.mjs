// UI test through Chromium: Push and Release through VS Code's git extension to a remote that asks for credentials.
// The shared remote is served over smart HTTP with basic authentication (test/helpers/gitHttpServer.ts: git
// http-backend behind a Node server) and alice's clone names it without credentials, with no credential helper:
// git asks VS Code's askpass, which asks alice in the workbench, as it would with GitHub over HTTPS. A wrong
// password: the push fails with git's own reason and the lock stays alice's. The right one: the work lands and
// the lock is released, with no second prompt (the pre-push guard and the landing check ask nothing more).
// Screenshots: push-askpass-username.png, push-askpass-refused.png, push-askpass-released.png.
// usage: node test/vscode/ui/pushAskpass.ui.mjs --vsix FILE [--host 1.100|1.139|oldest|newest] [--suite NAME]
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { log, parseOptions, resolveHost } from '../harness/codeServer.mjs';
import { createContainerFixture, fixtureEnvironment } from '../harness/fixture.mjs';
import { badgeShows, openWorkbench, runCommand, runUiTests, scaledMs, screenshot } from '../harness/ui.mjs';

const { startGitHttpServer } = await tsImport('../../helpers/gitHttpServer.ts', import.meta.url);

const options = parseOptions(process.argv.slice(2), { host: 'newest', vsix: '', suite: '' });
if (!options.vsix) throw new Error('--vsix FILE is required (npm run package builds one)');
const host = resolveHost(options.host);
const suffix = resolveHost('newest').name === host.name ? '' : `@${host.name}`;
const suite = options.suite || `vscode-ui:push-askpass@${host.name}`;
const vsix = path.resolve(options.vsix);
const PASSWORD = 'correct horse';

const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-push-askpass-'));
const fixture = createContainerFixture(shared);
const server = await startGitHttpServer(path.dirname(fixture.remote), { alice: PASSWORD });
const url = server.bareUrlFor(path.basename(fixture.remote));
// The fixture's environment has no global or system git config, so no credential helper: only askpass can answer.
const env = { ...fixtureEnvironment(fixture), LOCKSTEP_TEST_REMOTE: url };
const git = (...args) => execFileSync('git', args, { cwd: fixture.alice, env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
git('remote', 'set-url', 'origin', url);

let alice;
// The quiet workbench turns VS Code's git off (codeServer.mjs); here it is the point, so it is on.
const settings = { 'git.enabled': true };
const opened = openWorkbench({ host, vsix, label: `ui-push-askpass-${host.name}`, folder: fixture.alice, env, settings }).then(s => {
  alice = s;
  return s.page;
});
opened.catch(() => undefined);

/** Answers VS Code's askpass box whose placeholder (git's own question) matches `question`. */
async function answerAskpass(page, question, answer, shot) {
  const box = page.locator('.quick-input-widget input').and(page.locator(`[placeholder*="${question}"]`));
  await box.waitFor({ timeout: scaledMs(60_000) });
  if (shot) await screenshot(page, shot);
  await box.fill(answer);
  await page.keyboard.press('Enter');
  await box.waitFor({ state: 'hidden', timeout: scaledMs(20_000) });
}

const ok = await runUiTests(suite, [
  {
    name: 'the workbench opens on a clone whose remote needs credentials, and reads Free; alice acquires and commits',
    async run() {
      const a = await opened;
      await badgeShows(a, /^Free$/, 60_000);
      await runCommand(a, 'Lockstep: Acquire Lock');
      await badgeShows(a, /^Held by me #1 · /);
      fs.writeFileSync(path.join(fixture.alice, 'CHANGES.md'), "Alice's work\n");
      git('add', 'CHANGES.md');
      git('commit', '--quiet', '-m', "Alice's work");
    },
  },
  {
    name: "Push and Release with a wrong password: askpass asks, the push fails with git's reason, the lock stays alice's",
    async run() {
      const a = await opened;
      const before = server.counts.authenticated;
      await runCommand(a, 'Lockstep: Push and Release', { opensPrompt: true });
      await answerAskpass(a, 'Username', 'alice', `push-askpass-username${suffix}`);
      await answerAskpass(a, 'Password', 'wrong password');
      const toast = a.locator('.notification-toast', { hasText: /did not accept your credentials/ });
      await toast.waitFor({ timeout: scaledMs(60_000) });
      await screenshot(a, `push-askpass-refused${suffix}`);
      assert.match((await toast.textContent()) ?? '', /stays yours/, "the refusal says the lock stays alice's");
      assert.equal(server.counts.authenticated, before, 'nothing got through with the wrong password');
      await badgeShows(a, /^Held by me #1 · /);
      const remoteHead = execFileSync('git', ['rev-parse', 'main'], { cwd: fixture.remote, encoding: 'utf8' }).trim();
      assert.notEqual(remoteHead, git('rev-parse', 'HEAD'), 'nothing landed');
    },
  },
  {
    name: 'Push and Release with the right password: asked once, the work lands, the lock is released',
    async run() {
      const a = await opened;
      await runCommand(a, 'Lockstep: Push and Release', { opensPrompt: true });
      await answerAskpass(a, 'Username', 'alice');
      await answerAskpass(a, 'Password', PASSWORD);
      // No second prompt: the badge turns Free with nothing more answered (a prompt would hold it here).
      await badgeShows(a, /^Free$/, 60_000);
      const remoteHead = execFileSync('git', ['rev-parse', 'main'], { cwd: fixture.remote, encoding: 'utf8' }).trim();
      assert.equal(remoteHead, git('rev-parse', 'HEAD'), 'the push landed on the remote');
      await a.locator('.notification-toast', { hasText: 'pushed and released grant #1' }).waitFor({ timeout: scaledMs(20_000) });
      await screenshot(a, `push-askpass-released${suffix}`);
    },
  },
]);
await alice?.close(!ok);
await server.close();
if (!alice) log('the workbench did not open (its logs were saved)');
if (ok) fs.rmSync(shared, { recursive: true, force: true });
else log(`container kept: ${shared}`);
process.exit(ok ? 0 : 1);
