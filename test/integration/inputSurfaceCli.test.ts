import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { finished } from '../helpers/children';
import { createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { waitFor } from '../helpers/waitFor';

/**
 * The command line's input bounds whose check lives in the command itself (docs/inputs.md, issue
 * #27): each edge accepted and each neighbour refused with exit 2 naming the flag, through real
 * `lockstep` processes in clones of a real git repository (one shared file store). The parsers
 * shared with the library are checked edge by edge in test/unit/inputSurface.test.ts.
 */
describe('CLI input surface: each flag checked in its command, both sides of each bound (real processes, real git)', function () {
  this.timeout(240_000);
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember, op: TeamMember;
  const status = async (who: TeamMember) => expectOk(await team.cli(who, ['status']), `status of ${who.name}`);

  /** Each `args` is a usage error (exit 2, error code configuration) naming `setting`, with the message's gist. */
  async function usageErrors(who: TeamMember, runs: readonly (readonly string[])[], setting: string, gist: RegExp): Promise<void> {
    for (const args of runs) {
      const error = expectError(await team.cli(who, args, { timeoutMs: 30_000 }), 2, 'configuration');
      assert.equal(error.setting, setting, `${args.join(' ')}: ${error.message}`);
      assert.match(error.message, gist, args.join(' '));
    }
  }

  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ana', 'op'], operators: ['op'] });
    [lead, ana, op] = [team.member('lead'), team.member('ana'), team.member('op')];
  });
  after(() => team?.dispose());

  it('acquire --wait: 0 and 60 are accepted; 60.001, 61, -1, text and empty are usage errors (exit 2) naming wait', async () => {
    await usageErrors(
      lead,
      [
        ['acquire', '--wait', '60.001'],
        ['acquire', '--wait', '61'],
        ['acquire', '--wait=-1'],
        ['acquire', '--wait', 'soon'],
        ['acquire', '--wait', ''],
      ],
      'wait',
      /wait must be a number of seconds/,
    );
    // Written apart, a value that starts with a dash is read as another option: the message says how to give it.
    await usageErrors(lead, [['acquire', '--wait', '-1']], 'arguments', /ambiguous.*'--wait=-XYZ'\. See --help\.$/);
    assert.equal((await status(lead)).state, 'free', 'no refused --wait acquired anything');
    for (const wait of ['0', '60']) {
      expectOk(await team.cli(lead, ['acquire', '--wait', wait]), `acquire --wait ${wait}`);
      expectOk(await team.cli(lead, ['release']), 'release');
    }
  });

  it('wait --timeout: 0 and a large number are accepted (0 on a held lock: exit 3 at once); -1, text and empty are usage errors naming timeout', async () => {
    await usageErrors(
      ana,
      [
        ['wait', '--timeout=-1'],
        ['wait', '--timeout', 'later'],
        ['wait', '--timeout', ''],
        ['wait', '--timeout', '1e3'],
      ],
      'timeout',
      /timeout must be a number of seconds/,
    );
    expectOk(await team.cli(ana, ['wait', '--timeout', '864000']), 'wait --timeout 864000 on a free lock');
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    try {
      expectError(await team.cli(ana, ['wait', '--timeout', '0']), 3, 'busy');
      expectOk(await team.cli(lead, ['wait', '--timeout', '0']), 'the holder may go on at once');
    } finally {
      expectOk(await team.cli(lead, ['release']), 'release');
    }
  });

  it('heartbeat --every: 0.999, -1 and text are usage errors naming every; 86400 is accepted and runs until stopped (SIGTERM: exit 0)', async () => {
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    try {
      await usageErrors(
        lead,
        [
          ['heartbeat', '--every', '0.999'],
          ['heartbeat', '--every=-1'],
          ['heartbeat', '--every', 'often'],
          ['heartbeat', '--every', ''],
        ],
        'every',
        /every must be (from 1 to 86400 seconds|a number of seconds)/,
      );
      const child = team.spawnCli(lead, ['heartbeat', '--every', '86400']);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const done = finished(child, 90_000);
      await waitFor(() => /Heartbeat every 24h 00m for grant #\d+/.test(stderr), {
        timeoutMs: 60_000,
        description: 'the heartbeat loop to start',
      });
      child.kill('SIGTERM');
      const ended = await done;
      assert.equal(ended.code, 0, `${ended.stdout}${stderr}`);
      assert.match(ended.stdout, /^Stopped — grant #\d+ is no longer renewed/m);
    } finally {
      expectOk(await team.cli(lead, ['release']), 'release');
    }
  });

  it("run --ttl 1 and 86400, run --wait 0 and 60 are accepted; run --wait 61 is a usage error naming wait (the library's bound)", async () => {
    const cmd = ['--', process.execPath, '-e', '0'];
    for (const flags of [
      ['--ttl', '1'],
      ['--ttl', '86400'],
      ['--wait', '0'],
      ['--wait', '60'],
    ]) {
      const ran = await team.cli(lead, ['run', 'input-edges', ...flags, ...cmd]);
      assert.equal(ran.code, 0, `run ${flags.join(' ')}: ${ran.stdout}${ran.stderr}`);
      assert.equal(ran.json.released, true);
    }
    await usageErrors(
      lead,
      [
        ['run', 'input-edges', '--wait', '61', ...cmd],
        ['run', 'input-edges', '--wait', '60.5', ...cmd],
      ],
      'wait',
      /from 0 to 60/,
    );
  });

  it('lease-ids --count: 1 and 1,000,000 are accepted; 0, 1,000,001, a fraction and text are usage errors naming count', async () => {
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    try {
      await usageErrors(
        lead,
        ['0', '1000001', '1.5', 'ten'].map(n => ['lease-ids', '--to', ana.identity, '--count', n, '--new-identity']),
        'count',
        /--count must be a whole number from 1 to 1000000/,
      );
      assert.equal(
        expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '1', '--new-identity']), 'count 1').count,
        1,
      );
      assert.equal(
        expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '1000000']), 'count 1000000').count,
        1_000_000,
      );
    } finally {
      expectOk(await team.cli(lead, ['release']), 'release');
    }
  });

  it('done --block and audit --limit: text, fractions, negatives and empty are usage errors; audit --limit 0 too; 1 and 15 digits are accepted', async () => {
    await usageErrors(
      lead,
      [
        ['done', '--block', 'one'],
        ['done', '--block', '1.5'],
        ['done', '--block=-1'],
      ],
      'block',
      /--block must be a block number/,
    );
    await usageErrors(lead, [['done']], '--block', /--block is required/);
    await usageErrors(ana, [['audit', '--limit', '0']], '--limit', /--limit must be a whole number from 1/);
    await usageErrors(
      ana,
      [
        ['audit', '--limit', '1.5'],
        ['audit', '--limit=-1'],
        ['audit', '--limit', 'all'],
        ['audit', '--limit', ''],
        ['audit', '--limit', '1'.repeat(16)],
      ],
      '--limit',
      /--limit must be a whole number/,
    );
    assert.equal(expectOk(await team.cli(ana, ['audit', '--limit', '1']), 'audit --limit 1').audit.length, 1);
    const all = expectOk(await team.cli(ana, ['audit']), 'audit').audit.length;
    assert.equal(expectOk(await team.cli(ana, ['audit', '--limit', '9'.repeat(15)]), 'audit --limit 15 digits').audit.length, all);
  });

  it("verify's arguments and forge init's forge: each malformed one is a usage error (exit 2) naming it", async () => {
    const zeros = '0'.repeat(40);
    const commit = team.git(lead, 'rev-parse', 'HEAD').trim();
    await usageErrors(lead, [['verify']], 'arguments', /exactly one of --push/);
    await usageErrors(
      lead,
      [['verify', '--push', `${commit}..${commit}`, '--merge', 'main', commit, '--actor', 'a']],
      'arguments',
      /exactly one of --push/,
    );
    await usageErrors(
      lead,
      [
        ['verify', '--push', `${commit.slice(0, 39)}..${commit}`],
        ['verify', '--push', commit],
        ['verify', '--push', `${commit.toUpperCase()}..${commit}`],
      ],
      'push',
      /--push takes OLD\.\.NEW, two full commit ids/,
    );
    await usageErrors(lead, [['verify', '--push', `${zeros}..${zeros}`]], 'push', /cannot both be all zeros/);
    await usageErrors(lead, [['verify', '--push', `${commit}..${commit}`, 'extra']], 'push', /no other words/);
    await usageErrors(
      lead,
      [['verify', '--push', `${commit}..${commit}`, '--remote=-x']],
      'remote',
      /--remote must be the name of a remote/,
    );
    await usageErrors(lead, [['verify', '--merge', 'main', commit]], 'actor', /--merge needs --actor LOGIN/);
    await usageErrors(lead, [['verify', '--merge', 'main', commit, '--actor', 'a'.repeat(201)]], 'actor', /--merge needs --actor LOGIN/);
    await usageErrors(lead, [['verify', '--merge', 'main', commit.slice(0, 12), '--actor', 'a']], 'merge', /HEAD must be a full commit id/);
    await usageErrors(lead, [['verify', '--merge', 'main', '--actor', 'a']], 'merge', /--merge takes BASE/);
    await usageErrors(
      lead,
      [
        ['forge', 'init'],
        ['forge', 'init', 'bitbucket'],
        ['forge', 'init', 'GitHub'],
      ],
      'forge',
      /Say which forge/,
    );
  });

  it('hooks install --server --skew: 3601, -1, a fraction and text are usage errors naming --skew; 0 and 3600 are pinned in the shared repository', async () => {
    await usageErrors(
      lead,
      ['3601', '1.5', 'ten', '']
        .map(s => ['hooks', 'install', '--server', '--skew', s])
        .concat([['hooks', 'install', '--server', '--skew=-1']]),
      '--skew',
      /--skew must be a whole number of seconds from 0 to 3600/,
    );
    const server: TeamMember = { name: 'server', identity: '', dir: team.remote };
    for (const skew of ['0', '3600']) {
      const installed = expectOk(
        await team.cli(server, ['hooks', 'install', '--server', '--skew', skew]),
        `hooks install --server --skew ${skew}`,
      );
      assert.equal(
        JSON.parse(fs.readFileSync(installed.settingsFile, 'utf8')).skewSeconds,
        Number(skew),
        `the pinned skew after --skew ${skew}`,
      );
    }
  });

  it('required options: lease-ids without --to, assign without --block, adopt without --reason are usage errors naming the flag', async () => {
    await usageErrors(
      lead,
      [
        ['lease-ids', '--count', '1'],
        ['lease-ids', '--to', '', '--count', '1'],
      ],
      '--to',
      /--to is required/,
    );
    await usageErrors(lead, [['assign', '--to', ana.identity]], '--block', /--block is required/);
    await usageErrors(
      op,
      [
        ['adopt', '--grant', '0', '--next-id', '1'],
        ['adopt', '--reason', '', '--grant', '0', '--next-id', '1'],
      ],
      '--reason',
      /--reason is required/,
    );
  });

  it('init --remote: a remote name is taken; a path, a URL or one past 100 characters is a usage error naming remote, and nothing is written', async () => {
    const zoe: TeamMember = { name: 'zoe', identity: 'zoe@example.com', dir: path.join(team.root, 'fresh') };
    team.git(lead, 'init', '--quiet', '--initial-branch=main', zoe.dir);
    team.git(zoe, 'config', 'user.email', zoe.identity);
    team.git(zoe, 'commit', '--quiet', '--allow-empty', '-m', 'first');
    await usageErrors(
      zoe,
      [
        ['init', '--remote=../shared.git'],
        ['init', '--remote', 'https://example.com/r.git'],
        ['init', '--remote', 'r'.repeat(101)],
        ['init', '--remote=-x'],
      ],
      'remote',
      /The remote must be the name of one of this clone's remotes/,
    );
    assert.equal(fs.existsSync(path.join(zoe.dir, '.lockstep.json')), false);
    // A well-formed name passes the rule and reaches the next check: this repository has no such remote.
    const missing = expectError(await team.cli(zoe, ['init', '--remote', 'r'.repeat(100)]), 2, 'configuration');
    assert.equal(missing.setting, 'remote');
    assert.doesNotMatch(missing.message, /must be the name of one of this clone's remotes/);
  });

  it("status --remote URL: one git cannot read is exit 4 (backend), saying to check the URL; a file-driver container's remote is exit 2 naming --remote", async () => {
    const unreachable = expectError(
      await team.cli(lead, ['status', '--remote', `file://${path.join(team.root, 'no-such-remote.git')}`]),
      4,
      'backend',
    );
    assert.match(unreachable.message, /The remote could not be read \(check the URL and your access to it\)/);
    const fileDriver = expectError(await team.cli(lead, ['status', '--remote', `file://${team.remote}`]), 2, 'configuration');
    assert.equal(fileDriver.setting, '--remote');
    assert.match(fileDriver.message, /--remote reads git-driver containers only/);
  });

  it('adopt --grant and --next-id: text, fractions, negatives and --next-id 0 are usage errors before the store; --grant 0 --next-id 1 adopts a lost page', async () => {
    const adopt = (grant: string, nextId: string) => ['adopt', '--reason', 'store wiped', '--grant', grant, '--next-id', nextId];
    await usageErrors(
      op,
      [
        adopt('many', '1'),
        adopt('1.5', '1'),
        adopt('', '1'),
        adopt('1'.repeat(16), '1'),
        ['adopt', '--reason', 'r', '--grant=-1', '--next-id', '1'],
      ],
      '--grant',
      /--grant (must be a whole number|is required)/,
    );
    await usageErrors(op, [adopt('0', '0')], '--next-id', /--next-id must be a whole number from 1/);
    await usageErrors(
      op,
      [adopt('0', 'x'), adopt('0', '2.5'), ['adopt', '--reason', 'r', '--grant', '0', '--next-id=-1']],
      '--next-id',
      /--next-id must be a whole number/,
    );
    const before = expectOk(await team.cli(op, ['audit']), 'audit before').audit.length;
    assert.equal(
      expectOk(await team.cli(op, ['audit']), 'audit after the refusals').audit.length,
      before,
      'no refused adopt reached the page',
    );
    // The operator's clone has read the page's grant: its adopt never starts below it (grantWatermark.ts), whatever --grant says.
    const seen = expectOk(await team.cli(op, ['status']), 'status before the page is lost').grant;
    for (const entry of fs.readdirSync(team.store)) fs.rmSync(path.join(team.store, entry), { recursive: true, force: true });
    const adopted = expectOk(await team.cli(op, adopt('0', '1')), 'adopt --grant 0 --next-id 1');
    assert.deepEqual([adopted.grant, adopted.nextId], [seen, 1]);
    assert.equal(expectOk(await team.cli(ana, ['acquire']), 'acquire after adopt').grant, seen + 1);
    expectOk(await team.cli(ana, ['release']), 'release');
  });
});
