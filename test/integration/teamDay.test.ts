import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { finished } from '../helpers/children';
import { cliPath, createGitFixture, expectError, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { scaledSeconds } from '../helpers/calibration';
import { waitFor } from '../helpers/waitFor';

/**
 * A team's day without surprises (issue 13), through real `lockstep` processes in real clones of a
 * real bare remote, file driver: the lapsed lease, refusals that point the right way, the lock read
 * from the bare remote, the new commands (wait, forget, queue, ranges, blocks, release --push,
 * doctor, --version, family help), exit codes and JSON as the README says, and refused pushes in
 * the audit. One story, in order.
 */
// Long enough that a few CLI calls still see the lapsed lead's own window (the third): 10 s on an unloaded machine,
// scaled by the run's slowdown factor (test/helpers/calibration.ts), so that the CLI calls meant to run inside a
// window do so however busy the machine is.
const WINDOW_SECONDS = scaledSeconds(10);

describe("a team's day through the CLI (real processes, real git, file driver)", function () {
  this.timeout(180_000);
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember, ben: TeamMember;
  const status = async (who: TeamMember) => expectOk(await team.cli(who, ['status']), `status of ${who.name}`);
  const hooksDir = (who: TeamMember) => path.join(who.dir, '.git', 'hooks');

  before(async () => {
    team = await createGitFixture({ members: ['lead', 'ana', 'ben'], operators: ['lead'], settings: { windowSeconds: WINDOW_SECONDS } });
    [lead, ana, ben] = team.members;
  });
  after(() => team?.dispose());

  it('--version (also --json), and --help for the hooks and guard families', async () => {
    const version = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).version as string;
    assert.deepEqual(expectOk(await team.cli(ana, ['--version']), 'version'), { ok: true, version });
    assert.equal((await team.cli(ana, ['--version'], { json: false })).stdout, `lockstep ${version}\n`);
    for (const family of ['hooks', 'guard']) {
      const help = await team.cli(ana, [family, '--help'], { json: false });
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, new RegExp(`usage: lockstep ${family} \\S+`));
      const alone = await team.cli(ana, [family], { json: false });
      assert.equal(alone.code, 2, `${family} alone is a usage error, with the family's help`);
      assert.match(alone.stderr, new RegExp(`usage: lockstep ${family} `));
    }
    for (const command of ['wait', 'forget', 'queue', 'ranges', 'blocks', 'doctor', 'release']) {
      const help = await team.cli(ana, [command, '--help'], { json: false });
      assert.match(help.stdout, new RegExp(`^usage: lockstep ${command}`), command);
    }
  });

  it('a lease with seconds left prints them (Ns); acquiring again in the holding clone changes nothing (exit 0)', async () => {
    // The shortest lease (60 s), granted so that it lapses 6 s from now (lapsingGrant.ts): the lapse test below waits for it.
    const { grant, expiresAt } = await team.lapsingGrant(lead, 6_000);
    assert.equal(grant, 1);
    const asked = Date.now();
    const again = await team.cli(lead, ['acquire'], { json: false });
    const answered = Date.now();
    assert.equal(again.code, 0);
    const left = /You already hold the lock in this clone — grant #1, (\d+)s until expiry/.exec(again.stdout);
    assert.ok(left, again.stdout);
    // The seconds the lease had left while the command ran (the lapse is scaled on a loaded machine).
    assert.ok(
      Number(left[1]) >= Math.floor((expiresAt - answered) / 1000) && Number(left[1]) <= Math.ceil((expiresAt - asked) / 1000),
      again.stdout,
    );
    assert.doesNotMatch(again.stdout, /another clone/);
  });

  it("refusals point the right way: second in the queue is told to wait; a non-holder's release is not told to push", async () => {
    expectOk(await team.cli(ana, ['petition']), 'petition');
    expectOk(await team.cli(ben, ['petition']), 'petition');
    const second = expectError(await team.cli(ben, ['acquire']), 3, 'busy');
    assert.match(second.message, /position 2 of 2 in the queue: wait for your turn \(lockstep wait\)/);
    assert.doesNotMatch(second.message, /[Pp]etition/);
    const notHolder = expectError(await team.cli(ben, ['release']), 1, 'refused', 'not-holder');
    assert.doesNotMatch(notHolder.message, /push/i);
    assert.match(notHolder.message, /wait for your turn/);
  });

  it('the queue (with your place); bad counts are usage errors (exit 2) alike', async () => {
    const queue = expectOk(await team.cli(ben, ['queue']), 'queue');
    assert.deepEqual(
      queue.queue.map((p: { identity: string }) => p.identity),
      [ana.identity, ben.identity],
    );
    assert.equal(queue.position, 2);
    const human = await team.cli(ben, ['queue'], { json: false });
    assert.match(human.stdout, /^1\. ana@example\.com — since \d\d:\d\d \S+\n2\. ben@example\.com \(you\)/);
    expectError(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '0']), 2, 'configuration');
    expectError(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', 'abc']), 2, 'configuration');
  });

  it('the lapsed lease: stale while not queued (with when it expired), HOLDER SILENT like everyone once queued, then its turn to take over', async () => {
    const stale = await waitFor(
      async () => {
        const s = await status(lead);
        return s.state === 'stale' ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: "the lead's lease lapses" },
    );
    assert.equal(stale.lapse.how, 'expired');
    assert.equal(stale.lapse.grant, 1);
    const human = await team.cli(lead, ['status'], { json: false });
    assert.match(human.stdout, /Stale grant — your lease #1 expired at \d\d:\d\d \S+\. Pushes from this clone are blocked\./);
    assert.doesNotMatch(human.stdout, /below or past|Fetch/);
    assert.match(human.stdout, /Next: .*lockstep forget/);

    expectOk(await team.cli(lead, ['petition']), 'the lapsed lead petitions');
    const queued = await status(lead);
    // Its own grant is the silent one: once queued it sees HOLDER SILENT like everyone, not stale.
    assert.equal(queued.state, 'holder-silent', `not stale once queued: ${queued.state}`);
    assert.equal(queued.position, 3);
    assert.equal(queued.lapse.how, 'expired');
    assert.match((await team.cli(lead, ['status'], { json: false })).stdout, /\n {2}\(your lease #1 expired at \d\d:\d\d \S+\)/);

    // ana's and ben's windows pass unused: the lapsed lead's turn to take over comes like anyone's.
    const turn = await waitFor(
      async () => {
        const s = await status(lead);
        return s.canAcquire && s.turn?.identity === lead.identity ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: "the lead's turn" },
    );
    assert.equal(turn.state, 'holder-silent');
    assert.match(
      (await team.cli(lead, ['status'], { json: false })).stdout,
      /^HOLDER SILENT — .*; your turn: you may take over — acquire within /m,
    );
    assert.equal(turn.staleGrant, 1);
  });

  it('wait: exit 3 when the time runs out; exit 0 once it is your turn (progress on stderr)', async () => {
    expectOk(await team.cli(lead, ['acquire']), 'the lead acquires grant #2');
    expectOk(await team.cli(lead, ['lease-ids', '--to', ana.identity, '--count', '3']), 'lease-ids');
    expectOk(await team.cli(lead, ['assign', '--to', ben.identity, '--block', 'figures']), 'assign');
    assert.deepEqual(
      expectOk(await team.cli(ana, ['ranges', '--mine']), 'ranges').ranges.map((r: { start: number; end: number }) => [r.start, r.end]),
      [[1, 3]],
    );
    assert.deepEqual(expectOk(await team.cli(ben, ['ranges', '--mine']), 'ranges').ranges, []);
    assert.equal(expectOk(await team.cli(ana, ['ranges']), 'ranges').ranges.length, 1);
    assert.deepEqual(
      expectOk(await team.cli(ben, ['blocks', '--mine']), 'blocks').blocks.map((b: { text: string }) => b.text),
      ['figures'],
    );
    assert.deepEqual(expectOk(await team.cli(ana, ['blocks', '--mine']), 'blocks').blocks, []);
    assert.match(
      (await team.cli(ben, ['blocks'], { json: false })).stdout,
      /^Block 1 for ben@example\.com \(since \d\d:\d\d \S+\): figures$/m,
    );
    const short = await team.cli(ana, ['wait', '--timeout', '1'], { json: false });
    assert.equal(short.code, 3);
    assert.match(short.stderr, /waiting — position 1 of 2; held by lead@example\.com/);
    const waiting = team.cli(ana, ['wait', '--timeout', String(scaledSeconds(60))]);
    fs.appendFileSync(path.join(lead.dir, 'README.md'), "the lead's work\n");
    team.git(lead, 'commit', '--quiet', '-am', 'lead work');
    const released = expectOk(await team.cli(lead, ['release', '--push']), 'release --push');
    assert.equal(released.pushed, true);
    assert.equal(released.landed, team.git(lead, 'rev-parse', '--short=12', 'origin/main').trim());
    const turn = expectOk(await waiting, 'wait');
    assert.equal(turn.state, 'your-turn');
    const audit = expectOk(await team.cli(lead, ['audit']), 'audit').audit as { action: string; detail?: string }[];
    assert.equal(audit.filter(l => l.action === 'release').pop()?.detail, `landed ${released.landed}; reclaimed 3 unused identifiers`);
    const human = await team.cli(lead, ['audit'], { json: false });
    assert.doesNotMatch(human.stdout, /\d{4}-\d\d-\d\dT\d\d:\d\d/, 'one time format: no UTC ISO among local times');
    assert.match(human.stdout, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ {2}#0 {2}seed@example\.com {2}init/m);
  });

  it('release --push refuses (and keeps the lock) when the push is refused', async () => {
    expectOk(await team.cli(ana, ['acquire']), 'ana acquires');
    expectOk(await team.cli(ana, ['hooks', 'install']), 'hooks');
    // Someone else moved main meanwhile: ana's push is not a fast-forward.
    fs.writeFileSync(path.join(ana.dir, 'ana.txt'), 'ana\n');
    team.git(ana, 'add', 'ana.txt');
    team.git(ana, 'commit', '--quiet', '-m', 'ana work');
    const refused = expectError(await team.cli(ana, ['release', '--push']), 1, 'refused', 'not-landed');
    assert.match(
      refused.message,
      /^The push was refused, so the lock stays yours: origin\/main has commits this clone does not have: pull them \(git pull --rebase\), then push and release again\.$/,
    );
    assert.equal((await status(ana)).state, 'held-by-me');
    team.git(ana, 'pull', '--quiet', '--rebase', 'origin', 'main');
    expectOk(await team.cli(ana, ['release', '--push']), 'release --push after a rebase');
  });

  it('refused pushes that reach the client guard are audited, folded when repeated', async () => {
    expectOk(await team.cli(ben, ['hooks', 'install']), 'hooks');
    team.git(ben, 'pull', '--quiet', 'origin', 'main');
    fs.appendFileSync(path.join(ben.dir, 'README.md'), 'ben without the lock\n');
    team.git(ben, 'commit', '--quiet', '-am', 'ben work');
    for (let i = 0; i < 2; i++) {
      assert.throws(() => team.git(ben, 'push', '--quiet', 'origin', 'main'), /does not hold the lock/);
    }
    const audit = expectOk(await team.cli(lead, ['audit']), 'audit').audit as {
      action: string;
      who: string;
      outcome: string;
      count?: number;
      detail?: string;
    }[];
    const pushes = audit.filter(l => l.action === 'push');
    assert.equal(pushes.length, 1, 'two identical refusals fold into one line');
    assert.equal(pushes[0].who, ben.identity);
    assert.equal(pushes[0].outcome, 'refused');
    assert.equal(pushes[0].count, 2);
    assert.match(pushes[0].detail ?? '', /^client guard refused a push to main: This clone does not hold the lock/);
  });

  it('forget drops a lapsed session on purpose; refused while the session is the live holder', async () => {
    const got = await team.lapsingGrant(ben, 2_000);
    expectError(await team.cli(ben, ['forget']), 1, 'refused', 'already-holder');
    await waitFor(async () => (await status(ben)).state === 'stale', {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "ben's lease lapses",
    });
    assert.deepEqual(expectOk(await team.cli(ben, ['forget']), 'forget'), { ok: true, forgotten: got.grant });
    assert.equal(team.sessionToken(ben), undefined);
    assert.ok(!fs.existsSync(path.join(ben.dir, '.git', 'lockstep', 'push.config')));
    assert.equal((await status(ben)).state, 'holder-silent', 'no longer stale: the clone holds nothing');
  });

  it('doctor: driver, page, session, hooks and clock, each problem with its fix', async () => {
    const report = expectOk(await team.cli(ana, ['doctor']), 'doctor');
    const byCheck = new Map((report.findings as { check: string; level: string; found: string; fix?: string }[]).map(f => [f.check, f]));
    assert.equal(report.healthy, true);
    assert.match(byCheck.get('driver')!.found, new RegExp(`^file driver at ${team.store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, prefix `));
    assert.equal(byCheck.get('page')!.level, 'ok');
    assert.equal(byCheck.get('client-hook')!.level, 'ok');
    assert.equal(byCheck.get('server-hook')!.level, 'warning', 'a local-path remote without the server guard');
    assert.match(byCheck.get('server-hook')!.fix!, /lockstep hooks install --server/);
    assert.equal(byCheck.get('clock')!.level, 'ok');
    fs.rmSync(path.join(hooksDir(lead), 'pre-push'), { force: true });
    const leads = new Map(
      (expectOk(await team.cli(lead, ['doctor']), 'doctor').findings as { check: string; fix?: string }[]).map(f => [f.check, f]),
    );
    assert.equal(leads.get('client-hook')!.fix, 'lockstep hooks install');
    // An environment that points at another store than .lockstep.json is an error finding, with the fix.
    const elsewhere = await team.cli(lead, ['doctor'], { env: { LOCKSTEP_PATH: path.join(team.root, 'elsewhere') } });
    assert.equal(elsewhere.code, 1, 'a store other than the committed one is an error finding');
    const mismatch = (elsewhere.json.findings as { check: string; level: string; found: string; fix?: string }[]).find(
      f => f.check === 'container',
    )!;
    assert.equal(mismatch.level, 'error');
    assert.match(mismatch.found, /LOCKSTEP_PATH/);
    assert.match(mismatch.fix!, /Unset the settings the message names/);
  });

  it('status in the shared bare repository reads the pinned settings; without them it says what to do', async () => {
    const remote: TeamMember = { name: 'remote', identity: '', dir: team.remote };
    const before = expectError(await team.cli(remote, ['status']), 2, 'configuration');
    assert.match(before.message, /hooks install --server/);
    expectError(await team.cli(remote, ['hooks', 'install']), 2, 'configuration');
    expectOk(await team.cli(remote, ['hooks', 'install', '--server'], { env: { LOCKSTEP_PATH: team.store } }), 'server hooks');
    // The bare repository reads the pinned store, whatever this shell's LOCKSTEP_PATH says.
    const seen = expectOk(
      await team.cli(remote, ['status'], { env: { LOCKSTEP_PATH: path.join(team.root, 'elsewhere'), LOCKSTEP_IDENTITY: undefined } }),
      'status in the bare remote',
    );
    assert.equal(seen.container, team.container);
    assert.equal(seen.page.location, team.store);
    assert.equal(seen.identity, null);
    assert.equal(seen.grant, (await status(ana)).grant);
  });

  it('refused pushes that reach the server guard are audited too (file driver), folded when repeated', async () => {
    const remote: TeamMember = { name: 'remote', identity: '', dir: team.remote };
    expectOk(
      await team.cli(remote, ['hooks', 'install', '--server', '--require-proof'], { env: { LOCKSTEP_PATH: team.store } }),
      'server hooks',
    );
    for (let i = 0; i < 2; i++) {
      assert.throws(() => team.git(ben, 'push', '--quiet', '--no-verify', 'origin', 'main'), /pre-receive hook declined/);
    }
    const audit = expectOk(await team.cli(ana, ['audit']), 'audit').audit as {
      action: string;
      who: string;
      count?: number;
      detail?: string;
    }[];
    const server = audit.filter(l => l.action === 'push' && /^server guard/.test(l.detail ?? ''));
    assert.equal(server.length, 1);
    assert.equal(server[0].who, 'unknown pusher', 'the server names a pusher only when it authenticates them');
    assert.equal(server[0].count, 2);
    assert.match(server[0].detail!, /^server guard refused a push to main: This push carries no proof of grant/);
  });
});

describe('lockstep status --remote URL (git driver, no clone)', function () {
  this.timeout(120_000);
  let team: GitFixture;

  before(async () => {
    team = await createGitFixture({ members: ['ana', 'ben'], operators: [], initArgs: ['--driver', 'git'] });
  });
  after(() => team?.dispose());

  it('reads the lock ref from the remote into a temporary repository, from a folder that is no clone', async () => {
    const [ana] = team.members;
    expectOk(await team.cli(ana, ['acquire']), 'acquire');
    const outside = path.join(team.root, 'outside');
    fs.mkdirSync(outside);
    const cli = await cliPath();
    const run = await finished(
      spawn(process.execPath, [cli, '--cwd', outside, '--json', 'status', '--remote', `file://${team.remote}`], {
        env: { ...process.env, HOME: path.join(team.root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      60_000,
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const seen = JSON.parse(run.stdout);
    assert.equal(seen.state, 'held-by-other');
    assert.equal(seen.holder.identity, ana.identity);
    assert.equal(seen.container, team.container);
    assert.equal(seen.page.driver, 'git');
    assert.equal(fs.readdirSync(outside).length, 0, 'nothing left behind');
  });
});
