import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';

/**
 * `lockstep init` makes a container only where one belongs (issue #23), through real `lockstep`
 * processes on real repositories: not inside another container's work tree, not without the shared
 * remote, and not in a clone whose remote already has a committed `.lockstep.json` — that teammate
 * is told to pull, here and wherever a command would otherwise send them to `init`.
 */
describe('init refusals (real processes, real git)', function () {
  this.timeout(120_000);
  let team: GitFixture;
  let ana: TeamMember;
  const at = (dir: string, name = 'zoe'): TeamMember => ({ name, identity: `${name}@example.com`, dir });

  /** A new shared remote with one commit on main, pushed from a first clone at `dir`. */
  function repositoryWithRemote(bare: string, dir: string): TeamMember {
    const who = at(dir);
    team.git(at(team.root), 'init', '--quiet', '--bare', '--initial-branch=main', bare);
    team.git(at(team.root), 'clone', '--quiet', bare, dir);
    team.git(who, 'config', 'user.email', who.identity);
    team.git(who, 'config', 'user.name', who.name);
    team.git(who, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    fs.writeFileSync(path.join(dir, 'README.md'), '# work\n');
    team.git(who, 'add', 'README.md');
    team.git(who, 'commit', '--quiet', '-m', 'first');
    team.git(who, 'push', '--quiet', '-u', 'origin', 'main');
    return who;
  }

  before(async () => {
    team = await createGitFixture({ members: ['ana'], operators: ['ana'] });
    ana = team.member('ana');
  });
  after(() => team?.dispose());

  it("refuses a repository nested inside another container's work tree (exit 2), and writes nothing", async () => {
    const nested = repositoryWithRemote(path.join(team.root, 'vendor.git'), path.join(ana.dir, 'vendor', 'lib'));
    const error = expectError(await team.cli(nested, ['init']), 2, 'configuration');
    assert.equal(error.setting, 'cwd');
    assert.ok(error.message.includes(`inside the work tree of the container at ${ana.dir}`), error.message);
    assert.equal(fs.existsSync(path.join(nested.dir, '.lockstep.json')), false);
    // Deeper still: a repository inside a plain repository inside the container.
    const deeper = repositoryWithRemote(path.join(team.root, 'deeper.git'), path.join(nested.dir, 'deeper'));
    assert.equal(expectError(await team.cli(deeper, ['init']), 2, 'configuration').setting, 'cwd');
    // The same kind of repository outside any container is a container of its own.
    const outside = repositoryWithRemote(path.join(team.root, 'outside.git'), path.join(team.root, 'outside'));
    expectOk(await team.cli(outside, ['init']), 'init outside any container');
  });

  it('refuses a repository without a remote, and says how to add one (exit 2)', async () => {
    const solo = at(path.join(team.root, 'solo'));
    team.git(at(team.root), 'init', '--quiet', '--initial-branch=main', solo.dir);
    team.git(solo, 'config', 'user.email', solo.identity);
    team.git(solo, 'commit', '--quiet', '--allow-empty', '-m', 'first');
    const error = expectError(await team.cli(solo, ['init']), 2, 'configuration');
    assert.equal(error.setting, 'remote');
    assert.match(error.message, /has no remote.*`git remote add origin URL`/);
    assert.equal(fs.existsSync(path.join(solo.dir, '.lockstep.json')), false);

    // A remote under another name: named, and the way to choose it.
    team.git(solo, 'remote', 'add', 'upstream', path.join(team.root, 'vendor.git'));
    const other = expectError(await team.cli(solo, ['init']), 2, 'configuration');
    assert.match(other.message, /no remote named origin \(it has upstream\)\. Name the shared remote with --remote NAME/);
    assert.equal(fs.existsSync(path.join(solo.dir, '.lockstep.json')), false);
  });

  it('a teammate who has not pulled the committed .lockstep.json is told to pull, by init and by the other commands', async () => {
    const founder = repositoryWithRemote(path.join(team.root, 'late.git'), path.join(team.root, 'founder'));
    const late = at(path.join(team.root, 'late'), 'yan');
    team.git(at(team.root), 'clone', '--quiet', path.join(team.root, 'late.git'), late.dir);
    team.git(late, 'config', 'user.email', late.identity);
    // The founder initialises and pushes after the teammate cloned.
    const created = expectOk(await team.cli(founder, ['init']), 'founder init');
    team.git(founder, 'add', '.lockstep.json');
    team.git(founder, 'commit', '--quiet', '-m', 'lockstep container');
    team.git(founder, 'push', '--quiet', 'origin', 'main');
    const pagesBefore = fs.readdirSync(team.store).sort();

    // Before any fetch, the clone cannot know: pull comes first in what it is told.
    const unknown = expectError(await team.cli(late, ['status']), 1, 'refused', 'not-initialised');
    assert.match(unknown.message, /If a teammate has made it one, pull the committed file \(`git pull`\)/);

    const refused = expectError(await team.cli(late, ['init']), 2, 'configuration');
    assert.equal(refused.setting, '.lockstep.json');
    assert.match(
      refused.message,
      /origin\/main already has a committed \.lockstep\.json.*Pull it \(`git pull`\) instead of running lockstep init/,
    );
    assert.equal(fs.existsSync(path.join(late.dir, '.lockstep.json')), false, 'no second container file');
    assert.deepEqual(fs.readdirSync(team.store).sort(), pagesBefore, 'no second page');

    // Once the clone has fetched, every command says pull, and not init.
    for (const args of [['status'], ['acquire']]) {
      const told = expectError(await team.cli(late, args), 1, 'refused', 'not-initialised');
      assert.match(
        told.message,
        /has not pulled \.lockstep\.json yet: origin\/main has it.*Pull it \(`git pull`\).*do not run lockstep init/,
      );
    }
    team.git(late, 'pull', '--quiet', 'origin', 'main');
    const status = expectOk(await team.cli(late, ['status']), 'status after the pull');
    assert.equal(status.container, created.container);
  });
});
