import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockConfigurationError } from '../../src/core/errors';
import { chooseGitProgram, GIT_ON_PATH, gitProgram, useGitProgram } from '../../src/core/git/gitProgram';
import { GitRunner } from '../../src/core/git/runner';

/**
 * Windows: git found as VS Code finds it. The extension runs the git VS Code's git extension resolved
 * (or the git.path setting), which on Windows is often not on PATH; the command line and the server
 * guard keep git from PATH, and no environment variable picks another program.
 */
describe('the git program (Windows: git as VS Code finds it, the git.path setting)', () => {
  const realGit = (process.env.PATH ?? '')
    .split(path.delimiter)
    .map(dir => path.join(dir, 'git'))
    .find(file => fs.statSync(file, { throwIfNoEntry: false })?.isFile());
  const present = new Set(['C:\\Program Files\\Git\\cmd\\git.exe', '/opt/git/bin/git']);
  const exists = (file: string) => present.has(file);
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-gitprogram-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  afterEach(() => useGitProgram(GIT_ON_PATH));

  it("prefers the git VS Code's git extension resolved, then the first git.path that exists, else git on PATH", () => {
    assert.deepEqual(chooseGitProgram({ extensionPath: 'C:\\Program Files\\Git\\cmd\\git.exe', setting: '/opt/git/bin/git' }, exists), {
      program: 'C:\\Program Files\\Git\\cmd\\git.exe',
      source: 'vscode',
    });
    assert.deepEqual(chooseGitProgram({ setting: ['D:\\missing\\git.exe', 'C:\\Program Files\\Git\\cmd\\git.exe'] }, exists), {
      program: 'C:\\Program Files\\Git\\cmd\\git.exe',
      source: 'setting',
    });
    assert.deepEqual(chooseGitProgram({ setting: '/opt/git/bin/git' }, exists), { program: '/opt/git/bin/git', source: 'setting' });
    assert.deepEqual(chooseGitProgram({}, exists), GIT_ON_PATH);
    assert.deepEqual(chooseGitProgram({ setting: 'D:\\missing\\git.exe' }, exists), GIT_ON_PATH, 'a git.path that is not there');
  });

  it('never takes a relative path or a value of another type (it would name a program in whatever folder the host runs in)', () => {
    const anything = () => true;
    assert.deepEqual(chooseGitProgram({ extensionPath: 'git', setting: 'tools\\git.exe' }, anything), GIT_ON_PATH);
    assert.deepEqual(chooseGitProgram({ extensionPath: '', setting: [42, null, './git'] }, anything), GIT_ON_PATH);
    assert.deepEqual(chooseGitProgram({ setting: { path: '/opt/git/bin/git' } }, anything), GIT_ON_PATH);
  });

  it('the one runner starts the chosen program, found without PATH', async function () {
    if (!realGit) this.skip();
    const noPath = { PATH: path.join(dir, 'nothing-here') };
    const runner = new GitRunner({ gitDir: dir, baseEnv: noPath });
    await assert.rejects(runner.raw(['--version']), (e: unknown) => {
      assert.ok(e instanceof LockConfigurationError);
      assert.equal(e.setting, 'driver');
      assert.match(e.message, /not found on PATH; install git/);
      return true;
    });
    useGitProgram({ program: realGit!, source: 'vscode' });
    assert.match(await runner.raw(['--version']), /^git version /);
  });

  it('a chosen program that is missing is a configuration error naming git.path, not PATH', async () => {
    useGitProgram({ program: path.join(dir, 'Git', 'cmd', 'git.exe'), source: 'setting' });
    await assert.rejects(new GitRunner({ gitDir: dir }).raw(['--version']), (e: unknown) => {
      assert.ok(e instanceof LockConfigurationError);
      assert.equal(e.setting, 'git.path');
      assert.match(e.message, /the git that VS Code uses \(the git.path setting\), which was not found; check VS Code's git.path setting/);
      return true;
    });
  });

  it('the command line and the server guard keep git from PATH: no environment variable chooses the program', () => {
    // Nothing but the extension host calls useGitProgram; the default stays PATH whatever the environment says.
    assert.deepEqual(gitProgram(), GIT_ON_PATH);
    const source = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'core', 'git', 'gitProgram.ts'), 'utf8');
    assert.doesNotMatch(source, /process\.env/);
  });
});
