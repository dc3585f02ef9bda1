// UI test through Chromium: a real two-person session. Two code-server instances, one on alice's clone and one on
// bob's (each identity is its clone's git user.email), both on one shared file store and one bare remote.
// Alice acquires from the palette; bob's window shows "Held by alice", bob petitions from the palette ("Queued #1");
// alice commits, then "Lockstep: Push and Release"; bob's window shows "Your turn" and bob acquires from the palette.
// Alice's badge then counts "1 waiting" and a notification quotes bob's note.
// Screenshots: badge-held-by-other.png, badge-queued.png, badge-held-one-waiting.png, two-people-alice-petition-notice.png,
// badge-your-turn.png, and both windows at the end.
// usage: node test/vscode/ui/twoPeople.ui.mjs --vsix FILE [--host 1.100|1.139|oldest|newest] [--suite NAME]
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, parseOptions, resolveHost } from '../harness/codeServer.mjs';
import { createContainerFixture, fixtureEnvironment, lockstep } from '../harness/fixture.mjs';
import { badgeScreenshot, badgeShows, openWorkbench, runCommand, runUiTests, scaledMs, screenshot } from '../harness/ui.mjs';

const options = parseOptions(process.argv.slice(2), { host: 'newest', vsix: '', suite: '' });
if (!options.vsix) throw new Error('--vsix FILE is required (npm run package builds one)');
const host = resolveHost(options.host);
const suffix = resolveHost('newest').name === host.name ? '' : `@${host.name}`;
const suite = options.suite || `vscode-ui:two-people@${host.name}`;
const vsix = path.resolve(options.vsix);

// The container outlives both workbenches, so it lives in a folder of its own.
const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-two-people-'));
const fixture = createContainerFixture(shared);
const env = fixtureEnvironment(fixture);
let alice, bob;
const opened = Promise.all([
  openWorkbench({ host, vsix, label: `ui-alice-${host.name}`, folder: fixture.alice, env }).then(s => {
    alice = s;
  }),
  openWorkbench({ host, vsix, label: `ui-bob-${host.name}`, folder: fixture.bob, env }).then(s => {
    bob = s;
  }),
]);
opened.catch(() => undefined);
const ready = async () => {
  await opened;
  return { a: alice.page, b: bob.page };
};

const ok = await runUiTests(suite, [
  {
    name: 'both windows open on one container and read Free',
    async run() {
      const { a, b } = await ready();
      await Promise.all([badgeShows(a, /^Free$/, 60_000), badgeShows(b, /^Free$/, 60_000)]);
    },
  },
  {
    name: 'alice acquires from the palette; bob\'s window shows "Held by alice" without a reload',
    async run() {
      const { a, b } = await ready();
      await runCommand(a, 'Lockstep: Acquire Lock');
      await badgeShows(a, /^Held by me #1 · /);
      const badge = await badgeShows(b, /^Held by alice$/);
      assert.equal(badge.icon, 'codicon-lock');
      assert.equal(badge.severity, 'normal');
      await badgeScreenshot(b, `badge-held-by-other${suffix}`);
    },
  },
  {
    name: 'bob petitions from the palette (with a note) and reads "Queued #1"',
    async run() {
      const { b } = await ready();
      await runCommand(b, 'Lockstep: Petition for the Lock', { input: { prompt: 'A note for the lead', answer: 'the parser' } });
      const badge = await badgeShows(b, /^Queued #1$/);
      assert.equal(badge.icon, 'codicon-watch');
      const queue = lockstep(fixture.alice, ['status'], { store: fixture.store }).queue;
      assert.deepEqual(
        queue.map(p => [p.identity, p.note]),
        [['bob@example.com', 'the parser']],
      );
      await badgeScreenshot(b, `badge-queued${suffix}`);
    },
  },
  {
    name: 'alice hears of it: her badge counts "1 waiting", and a notification quotes bob\'s note with Push and Release and Open Lock Page',
    async run() {
      const { a } = await ready();
      await badgeShows(a, /^Held by me #1 · .+ · 1 waiting$/);
      await badgeScreenshot(a, `badge-held-one-waiting${suffix}`);
      const toast = a.locator('.notification-toast', { hasText: 'bob@example.com petitioned for the lock: "the parser"' });
      await toast.getByRole('button', { name: 'Push and Release' }).waitFor({ timeout: scaledMs(15_000) });
      await toast.getByRole('button', { name: 'Open Lock Page' }).waitFor({ timeout: scaledMs(5_000) });
      await a.locator('.notification-toast:not(.notification-fade-in-done)').waitFor({ state: 'detached', timeout: scaledMs(10_000) });
      await screenshot(a, `two-people-alice-petition-notice${suffix}`);
    },
  },
  {
    name: 'alice commits, then "Lockstep: Push and Release"; bob sees "Your turn" (warning background)',
    async run() {
      const { a, b } = await ready();
      fs.writeFileSync(path.join(fixture.alice, 'CHANGES.md'), "Alice's work\n");
      execFileSync('git', ['add', 'CHANGES.md'], { cwd: fixture.alice, env: { ...process.env, ...env } });
      execFileSync('git', ['commit', '--quiet', '-m', "Alice's work"], { cwd: fixture.alice, env: { ...process.env, ...env } });
      await runCommand(a, 'Lockstep: Push and Release');
      await badgeShows(a, /^Free — bob's turn$/);
      const remoteHead = execFileSync('git', ['rev-parse', 'main'], { cwd: fixture.remote, encoding: 'utf8' }).trim();
      const aliceHead = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: fixture.alice, encoding: 'utf8' }).trim();
      assert.equal(remoteHead, aliceHead, 'the push landed on the remote');
      const badge = await badgeShows(b, /^Your turn · \d+s$/);
      assert.equal(badge.icon, 'codicon-bell');
      assert.equal(badge.severity, 'warning', `background ${badge.background}`);
      await badgeScreenshot(b, `badge-your-turn${suffix}`);
      // The "Your turn" notification, with its Acquire button, is on bob's screen.
      const toast = b.locator('.notification-toast', { hasText: 'Lockstep: your turn' });
      await toast.getByRole('button', { name: 'Acquire' }).waitFor({ timeout: scaledMs(10_000) });
      await b.locator('.notification-toast:not(.notification-fade-in-done)').waitFor({ state: 'detached', timeout: scaledMs(10_000) });
      await screenshot(b, `two-people-bob-your-turn${suffix}`);
    },
  },
  {
    name: 'bob acquires from the palette: Held by me #2 for bob, Held by bob for alice',
    async run() {
      const { a, b } = await ready();
      await runCommand(b, 'Lockstep: Acquire Lock');
      await badgeShows(b, /^Held by me #2 · /);
      await badgeShows(a, /^Held by bob$/);
      await screenshot(a, `two-people-alice-end${suffix}`);
      await screenshot(b, `two-people-bob-end${suffix}`);
    },
  },
]);
await Promise.all([alice?.close(!ok), bob?.close(!ok)]);
if (!alice || !bob) log('a workbench did not open (its logs were saved)');
if (ok) fs.rmSync(shared, { recursive: true, force: true });
else log(`container kept: ${shared}`);
process.exit(ok ? 0 : 1);
