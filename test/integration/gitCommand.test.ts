import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitCommandError, gitIn } from '../../src/core/gitCommand';

describe('gitIn(): git in a folder of the user', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();

  before(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-gitcommand-'));
    git('init', '-q', '-b', 'main');
    for (const [key, value] of [['user.email', 'a@example.com'], ['user.name', 'a']]) git('config', key, value);
    fs.writeFileSync(path.join(repo, 'a'), 'a\n');
    git('add', 'a');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(repo, 'a'), 'b\n');
    git('commit', '-qam', 'two');
  });
  after(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('resolves with stdout when git exits 0', async () => {
    assert.equal((await gitIn(repo).raw(['rev-parse', '--abbrev-ref', 'HEAD'])).trim(), 'main');
  });

  it('rejects a silent non-zero exit: "no" from merge-base --is-ancestor is never read as "yes"', async () => {
    const first = git('rev-parse', 'HEAD~1');
    const second = git('rev-parse', 'HEAD');
    await gitIn(repo).raw(['merge-base', '--is-ancestor', first, second]);
    await assert.rejects(gitIn(repo).raw(['merge-base', '--is-ancestor', second, first]),
      (error: unknown) => error instanceof GitCommandError && error.exitCode === 1 && /git exited 1/.test(error.message));
  });

  it('rejects with git\'s stderr when it says why', async () => {
    await assert.rejects(gitIn(repo).raw(['cat-file', 'blob', 'HEAD:missing']),
      (error: unknown) => error instanceof GitCommandError && error.exitCode !== 0 && /missing/.test(error.message));
  });
});
