import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockConfigurationError } from '../../src/core/errors';
import { GitError } from '../../src/core/git/gitError';
import { gitIn } from '../../src/core/git/runner';

describe('the git runner: gitIn(), git in a folder of the user', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();

  before(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-gitrunner-'));
    git('init', '-q', '-b', 'main');
    for (const [key, value] of [
      ['user.email', 'a@example.com'],
      ['user.name', 'a'],
    ])
      git('config', key, value);
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
    await assert.rejects(
      gitIn(repo).raw(['merge-base', '--is-ancestor', second, first]),
      (error: unknown) =>
        error instanceof GitError &&
        error.exitCode === 1 &&
        error.subcommand === 'merge-base' &&
        /git merge-base failed \(exit 1\)/.test(error.message),
    );
  });

  it("rejects with a GitError whose cause is git's stderr, redacted; its message never quotes git", async () => {
    await assert.rejects(
      gitIn(repo).raw(['cat-file', 'blob', 'HEAD:missing']),
      (error: unknown) =>
        error instanceof GitError &&
        error.exitCode === 128 &&
        !/missing/.test(error.message) &&
        /git cat-file exited 128: .*missing/.test(String((error.cause as Error).message)),
    );
    const url = 'https://alice:s3cret@127.0.0.1:1/repo.git';
    await assert.rejects(gitIn(repo).raw(['ls-remote', '--end-of-options', url]), (error: unknown) => {
      assert.ok(error instanceof GitError, String(error));
      assert.equal(error.kind, 'unreachable');
      assert.doesNotMatch(`${error.message} ${(error.cause as Error).message}`, /s3cret/);
      return true;
    });
  });

  it('outside a repository: a configuration error (exit 2) caused by the GitError', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-gitrunner-outside-'));
    try {
      await assert.rejects(
        gitIn(outside).raw(['rev-parse', '--git-dir']),
        (error: unknown) =>
          error instanceof LockConfigurationError && error.cause instanceof GitError && (error.cause as GitError).exitCode === 128,
      );
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('never lets git use a transport that runs a command (ext::), whatever the configuration allows', async () => {
    const marker = path.join(repo, '..', `${path.basename(repo)}-ext-ran`);
    await assert.rejects(
      gitIn(repo).raw(['-c', 'protocol.allow=always', 'ls-remote', '--end-of-options', `ext::touch ${marker}`]),
      (error: unknown) => error instanceof LockConfigurationError && error.setting === 'remote',
    );
    assert.equal(fs.existsSync(marker), false, 'the ext:: command never ran');
    await assert.rejects(
      gitIn(repo).raw(['ls-remote', '--end-of-options', `ext::touch ${marker}`], { env: { GIT_ALLOW_PROTOCOL: 'ext:file' } }),
    );
    assert.equal(fs.existsSync(marker), false, 'a GIT_ALLOW_PROTOCOL of the run cannot widen it either');
  });
});
