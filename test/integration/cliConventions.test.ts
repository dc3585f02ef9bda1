import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';

/**
 * The command line's conventions (issue #26): usage errors exit 2 everywhere (no command, `--json`
 * alone, outside a repository, a misspelt command, with "did you mean"); `help CMD` prints what `CMD
 * --help` prints; `audit` and `doctor` work in the shared bare repository, as `status` does. Real
 * `lockstep` processes, a real bare remote and clones.
 */
describe('CLI conventions: exit 2 for usage, did you mean, help CMD, the bare repository (real processes, real git)', function () {
  this.timeout(180_000);
  let team: GitFixture;
  let lead: TeamMember;
  let bare: TeamMember;
  let nowhere: TeamMember;

  before(async () => {
    team = await createGitFixture({ members: ['lead'], operators: ['lead'] });
    [lead] = team.members;
    bare = { name: 'remote', identity: 'ops@example.com', dir: team.remote };
    nowhere = { name: 'nowhere', identity: 'ops@example.com', dir: fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-no-repo-')) };
  });
  after(() => {
    team?.dispose();
    if (nowhere) fs.rmSync(nowhere.dir, { recursive: true, force: true });
  });

  it('no command, with or without --json, is a usage error (exit 2); --help alone is not', async () => {
    const error = expectError(await team.cli(lead, []), 2, 'configuration');
    assert.match(error.message, /^No command given\. Run lockstep --help for the list\.$/);
    const human = await team.cli(lead, [], { json: false });
    assert.equal(human.code, 2);
    assert.match(human.stderr, /^usage: lockstep /);
    assert.equal((await team.cli(lead, ['--help'], { json: false })).code, 0);
  });

  it('a misspelt command or subcommand: exit 2, the words as typed, and the nearest command; nothing near, no guess', async () => {
    const cases: [string[], RegExp][] = [
      [['stauts'], /^Unknown command: stauts\. Did you mean `lockstep status`\?/],
      [['aquire'], /^Unknown command: aquire\. Did you mean `lockstep acquire`\?/],
      [['hooks', 'instal'], /^Unknown command: hooks instal\. Did you mean `lockstep hooks install`\?/],
      [['nope'], /^Unknown command: nope\. Run lockstep --help for the list\.$/],
    ];
    for (const [args, message] of cases) {
      const error = expectError(await team.cli(lead, args), 2, 'configuration');
      assert.match(error.message, message, args.join(' '));
    }
    assert.equal((await team.cli(lead, ['stauts'])).json.error.setting, 'command');
  });

  it('help CMD prints exactly what CMD --help prints, for a command, a subcommand and a family', async () => {
    for (const words of [['status'], ['hooks', 'install'], ['audit']]) {
      const viaHelp = await team.cli(lead, ['help', ...words], { json: false });
      const viaFlag = await team.cli(lead, [...words, '--help'], { json: false });
      assert.equal(viaHelp.code, 0, words.join(' '));
      assert.equal(viaHelp.stdout, viaFlag.stdout, words.join(' '));
      assert.match(viaHelp.stdout, new RegExp(`^usage: lockstep ${words.join(' ')}`));
    }
    const family = await team.cli(lead, ['help', 'hooks'], { json: false });
    assert.match(family.stdout, /usage: lockstep hooks install[\s\S]*usage: lockstep hooks status/);
    expectError(await team.cli(lead, ['help', 'stauts']), 2, 'configuration');
  });

  it('outside any git repository: a configuration error (exit 2) that says to work in a clone, for status, acquire and audit', async () => {
    for (const args of [['status'], ['acquire'], ['audit']]) {
      const error = expectError(await team.cli(nowhere, args), 2, 'configuration');
      assert.match(error.message, /^This folder is not inside a git repository; Lockstep works on a git clone/, args[0]);
      assert.equal(error.setting, 'repository');
    }
    const doctor = await team.cli(nowhere, ['doctor']);
    assert.equal(doctor.code, 1);
    assert.equal(doctor.json.findings[0].check, 'container');
  });

  it("in the shared bare repository: audit prints the page's lines and doctor checks the server guard and the page, as status reads them", async () => {
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    // Before the server guard: doctor says there is none (a warning), and audit cannot know where the page is.
    const unguarded = expectOk(await team.cli(bare, ['doctor']), 'doctor without a server guard');
    assert.deepEqual(
      unguarded.findings.map((f: { check: string; level: string }) => [f.check, f.level]),
      [
        ['repository', 'ok'],
        ['server-hook', 'warning'],
      ],
    );
    expectError(await team.cli(bare, ['audit']), 2, 'configuration');

    expectOk(await team.cli(bare, ['hooks', 'install', '--server']), 'server guard');
    const audit = expectOk(await team.cli(bare, ['audit', '--limit', '1']), 'audit in the bare repository');
    assert.deepEqual(
      audit.audit.map((l: { who: string; action: string; grant: number }) => [l.who, l.action, l.grant]),
      [[lead.identity, 'acquire', 1]],
    );
    const text = await team.cli(bare, ['audit'], { json: false });
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`#1  ${lead.identity.replace('.', '\\.')}  acquire`));
    expectError(await team.cli(bare, ['audit', '--history']), 2, 'configuration');

    const doctor = expectOk(await team.cli(bare, ['doctor']), 'doctor in the bare repository');
    const page = doctor.findings.find((f: { check: string }) => f.check === 'page');
    assert.equal(page.level, 'ok');
    assert.match(page.found, new RegExp(`holds the page: grant #1 held by ${lead.identity.replace('.', '\\.')}`));
    assert.equal(doctor.healthy, true);

    // A pinned store without the page is the doctor's error, never a free lock.
    const moved = `${team.store}.away`;
    fs.renameSync(team.store, moved);
    try {
      const broken = await team.cli(bare, ['doctor']);
      assert.equal(broken.code, 1);
      assert.equal(broken.json.findings.find((f: { check: string }) => f.check === 'page').level, 'error');
      // A script that checks `ok` reads the failure as one.
      assert.deepEqual([broken.json.ok, broken.json.exitCode, broken.json.healthy], [false, 1, false]);
    } finally {
      // (Opening the file driver makes its folder; the page is in the one moved away.)
      fs.rmSync(team.store, { recursive: true, force: true });
      fs.renameSync(moved, team.store);
    }
  });
});
