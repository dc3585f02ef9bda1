import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configuredUrls, lastSetting, readCloneSettings } from '../../src/core/git/cloneSettings';
import { gitIn } from '../../src/core/git/runner';
import { useTempDir } from '../helpers/tempDir';

/**
 * The clone's settings read in one `git config` run (cloneSettings.ts) answer what the separate git
 * queries they replace answered: `git config --get user.email`, and `git remote get-url --all
 * [--push]` wherever the reading claims certainty — against a real git, for each way a remote's URLs
 * can be set. Where git would rewrite or look elsewhere (insteadOf, pushInsteadOf, a legacy remotes
 * file, an empty URL), the reading must step aside so that git is asked.
 */
describe('clone settings read in one git run answer as the separate git queries did', () => {
  const tmp = useTempDir('lockstep-clone-settings');
  let repo: string;
  const git = (...args: string[]) => {
    const done = spawnSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    return { code: done.status, out: done.stdout };
  };
  const gitLines = (...args: string[]) => {
    const done = git(...args);
    return done.code === 0 ? done.out.split('\n').filter(Boolean) : undefined;
  };

  beforeEach(() => {
    repo = path.join(tmp.path, 'clone');
    fs.mkdirSync(repo);
    git('init', '--quiet');
  });

  /** What the reading says of `name`, checked against git; returns whether it answered without git. */
  async function agreesWithGit(name: string): Promise<boolean> {
    const settings = await readCloneSettings(gitIn(repo));
    const read = configuredUrls(settings, name);
    if (read === undefined) return false;
    assert.deepEqual(read.fetch, gitLines('remote', 'get-url', '--all', '--end-of-options', name), `fetch URLs of ${name}`);
    assert.deepEqual(read.push, gitLines('remote', 'get-url', '--all', '--push', '--end-of-options', name), `push URLs of ${name}`);
    return true;
  }

  it('one URL, several URLs, a push URL: read from the settings, as git prints them', async () => {
    git('remote', 'add', 'origin', '/srv/team.git');
    git('remote', 'add', 'upstream', 'https://example.invalid/a.git');
    git('remote', 'set-url', '--add', 'upstream', 'ssh://example.invalid/b.git');
    git('remote', 'add', 'mirror', '/srv/mirror.git');
    git('remote', 'set-url', '--push', 'mirror', '/srv/elsewhere.git');
    assert.equal(await agreesWithGit('origin'), true);
    assert.equal(await agreesWithGit('upstream'), true);
    assert.equal(await agreesWithGit('mirror'), true);
  });

  it('insteadOf, pushInsteadOf, a legacy remotes file, an empty URL, no such remote: git is asked', async () => {
    git('remote', 'add', 'origin', 'team:repo.git');
    git('config', 'url./srv/.insteadOf', 'team:');
    assert.equal(await agreesWithGit('origin'), false, 'insteadOf rewrites the URL');
    git('config', '--unset', 'url./srv/.insteadOf');
    assert.equal(await agreesWithGit('origin'), true, 'without it, read');
    git('config', 'url.ext::sh.pushInsteadOf', 'team:');
    assert.equal(await agreesWithGit('origin'), false, 'pushInsteadOf rewrites the push URL');
    git('config', '--unset', 'url.ext::sh.pushInsteadOf');

    fs.mkdirSync(path.join(repo, '.git', 'remotes'));
    fs.writeFileSync(path.join(repo, '.git', 'remotes', 'legacy'), 'URL: /srv/legacy.git\n');
    assert.deepEqual(gitLines('remote', 'get-url', 'legacy'), ['/srv/legacy.git'], 'git reads the legacy file');
    assert.equal(await agreesWithGit('legacy'), false, 'a remote only in a legacy file');

    git('config', '--add', 'remote.blank.url', '');
    assert.equal(await agreesWithGit('blank'), false, 'an empty URL');
    assert.equal(await agreesWithGit('nowhere'), false, 'no such remote');
    assert.equal(await agreesWithGit('--upload-pack=x'), false, 'an option is never looked up');
  });

  it('user.email: the value git config --get prints (the last one set), or none', async () => {
    assert.equal(lastSetting(await readCloneSettings(gitIn(repo)), 'user.email'), undefined);
    git('config', 'user.email', 'first@example.com');
    git('config', '--add', 'user.email', 'last@example.com');
    const settings = await readCloneSettings(gitIn(repo), ['push\\.pushoption']);
    assert.equal(lastSetting(settings, 'user.email'), git('config', '--get', 'user.email').out.trim());
    assert.equal(lastSetting(settings, 'user.email'), 'last@example.com');
  });
});
