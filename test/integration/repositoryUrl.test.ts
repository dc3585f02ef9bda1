import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sameRepository } from '../../src/core/guard/repositoryUrl';
import { useTempDir } from '../helpers/tempDir';

/** The client guard's test of whether a push goes to the shared repository, on real folders (a bare one, a clone's). */
describe('the same repository, however its URL is spelt (client guard)', () => {
  const tmp = useTempDir('lockstep-repo-url');

  it('a local repository: by path, relative path, file:// URL, trailing slash, git’s .git suffix, a symbolic link', () => {
    const bare = path.join(tmp.path, 'team.git');
    execFileSync('git', ['init', '--quiet', '--bare', bare]);
    const cwd = path.join(tmp.path, 'clone');
    fs.mkdirSync(cwd);
    fs.symlinkSync(bare, path.join(tmp.path, 'linked.git'));
    const shared = [bare];
    for (const url of [
      bare,
      `${bare}/`,
      `${bare}//`,
      '../team.git',
      '../team.git/',
      `file://${bare}`,
      path.join(tmp.path, 'team'),
      '../linked.git',
    ]) {
      assert.equal(sameRepository(url, shared, cwd), true, url);
    }
    assert.equal(sameRepository(bare, ['../team.git/'], cwd), true, 'the shared URL may be the one spelt otherwise');
    const other = path.join(tmp.path, 'other.git');
    execFileSync('git', ['init', '--quiet', '--bare', other]);
    for (const url of [other, '../other.git', `file://${other}`, path.join(tmp.path, 'missing.git'), '']) {
      assert.equal(sameRepository(url, shared, cwd), false, url);
    }
  });

  it("a work tree's repository is its .git folder, named by the work tree or the folder", () => {
    const work = path.join(tmp.path, 'work');
    execFileSync('git', ['init', '--quiet', work]);
    assert.equal(sameRepository(path.join(work, '.git'), [work], tmp.path), true);
    assert.equal(sameRepository(`${work}/`, [path.join(work, '.git')], tmp.path), true);
  });

  it('other transports compare by their text, without trailing slashes and .git', () => {
    const shared = ['git@forge.example:team/app.git'];
    for (const url of ['git@forge.example:team/app.git', 'git@forge.example:team/app', 'git@forge.example:team/app.git/']) {
      assert.equal(sameRepository(url, shared, tmp.path), true, url);
    }
    assert.equal(sameRepository('https://forge.example/team/app/', ['https://forge.example/team/app.git'], tmp.path), true);
    for (const url of ['git@forge.example:team/fork.git', 'https://forge.example/team/app.git', 'ssh://git@forge.example/team/app.git']) {
      assert.equal(sameRepository(url, shared, tmp.path), false, url);
    }
  });
});
