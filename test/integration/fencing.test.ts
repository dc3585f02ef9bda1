import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createFencingTeam,
  refused,
  refusedByClient,
  refusedByServer,
  waitUntilExpired,
  type CliResult,
  type FencingTeam,
  type TeamMember,
} from '../helpers/fencingFixture';
import { storedText, storeTexts } from '../helpers/storeTexts';
import { walk } from '../helpers/tempDir';

/**
 * Fencing at landing with real git: a bare remote guarded by `lockstep guard pre-receive`, clones
 * guarded by `lockstep guard pre-push`, real `lockstep` processes, one shared file store. Within a
 * `describe` the steps are one story told in order; each starts where the previous one ended.
 */

/**
 * Alice's grant is the shortest lease (60 s) dated so that it runs out 6 s after it is written (lapsingGrant.ts):
 * time to land, then the story waits for her silence (polled, never slept). Bob takes over from her silence, so
 * his lease cannot be dated earlier than her expiry: it really lasts the container's 60 s, and the story waits
 * for it once.
 */
const ALICE_LAPSE_MS = 6_000;
const BOB_TTL = '60';
const OPS = 'ops@example.com';

function ok(result: CliResult, what: string): any {
  assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
  if (result.json !== undefined) assert.equal(result.json.ok, true);
  return result.json;
}

/** No guard spoke (the path of the test folder contains "lockstep", so match the guards' prefixes). */
function assertGuardsSilent(stderr: string): void {
  assert.doesNotMatch(stderr, /^(remote: )?lockstep:/m);
}

describe('fencing at landing with real git (pre-push + pre-receive, file driver)', function () {
  this.timeout(180_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember, carol: TeamMember, eve: TeamMember;
  const push = (who: TeamMember, ...extra: string[]) => team.git(who.dir, ['push', ...extra, 'origin', 'HEAD:refs/heads/main']);
  const status = async (who: TeamMember) => ok(await team.lockstep(who.dir, ['status']), `status of ${who.name}`);
  /** Git's own trace of every git command line (the pushes and the guards' git calls), for the argv check. */
  const traces: string[] = [];

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob', 'carol', 'eve'] });
    [alice, bob, carol, eve] = team.members;
  });
  after(() => team?.dispose());

  describe("the seed's worked example", () => {
    let bobsLanding = '';

    it('alice acquires grant #1 and lands while she holds it; her proof travels in push options from .git/lockstep/push.config', async () => {
      const got = await team.lapsingGrant(alice.dir, ALICE_LAPSE_MS);
      assert.equal(got.grant, 1);
      const config = path.join(alice.dir, '.git', 'lockstep', 'push.config');
      assert.equal(fs.statSync(config).mode & 0o777, 0o600);
      assert.match(fs.readFileSync(config, 'utf8'), /pushOption = lockstep-grant=1\n\tpushOption = lockstep-proof=[0-9a-f]{64}\n/);
      assert.deepEqual(
        (await team.pushOptions(alice)).map(l => l.replace(/[0-9a-f]{64}/, 'HEX')),
        ['lockstep-grant=1', 'lockstep-proof=HEX'],
      );

      const sha = await team.commit(alice, 'a.txt');
      const trace = path.join(team.root, 'trace-alice.txt');
      const pushed = await team.git(alice.dir, ['push', 'origin', 'main'], { env: { GIT_TRACE: trace } });
      ok(pushed, 'alice push while holding');
      assert.match(pushed.stderr, /lockstep: grant #1 verified for main\./);
      assert.equal(team.remoteSha(), sha, "the remote took alice's commit");
      traces.push(fs.readFileSync(trace, 'utf8'));
      assert.match(traces[0], /run_command: .*hooks\/pre-push origin /, 'the trace saw the pre-push hook');
      assert.match(traces[0], /receive-pack/, 'the trace saw the remote side');
    });

    it("bob petitions; alice's lease expires without a release; bob (queue head) acquires grant #2 and lands", async () => {
      assert.equal(ok(await team.lockstep(bob.dir, ['petition']), 'petition').position, 1);
      const expired = await waitUntilExpired(team, bob.dir);
      assert.equal(expired.state, 'holder-silent', 'the badge shows HOLDER SILENT, to the queue head too');
      assert.equal(expired.canAcquire, true, 'the head may take over');
      assert.equal(expired.holder.identity, alice.identity);
      const got = ok(await team.lockstep(bob.dir, ['acquire', '--ttl', BOB_TTL]), 'bob acquire');
      assert.equal(got.grant, 2);
      await team.gitOk(bob.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
      bobsLanding = await team.commit(bob, 'b.txt');
      const pushed = await push(bob);
      ok(pushed, 'bob push');
      assert.match(pushed.stderr, /lockstep: grant #2 verified for main\./);
      assert.equal(team.remoteSha(), bobsLanding);
      const seen = await status(alice);
      assert.equal(seen.state, 'stale');
      assert.equal(seen.staleGrant, 1);
    });

    it("alice's late push is refused by her pre-push hook: grant #1 has ended, #2 is bob's", async () => {
      await team.commit(alice, 'late.txt');
      const stderr = refusedByClient(await push(alice), 'alice late push');
      assert.match(stderr, /lockstep: Your grant #1 has ended; the current grant is #2, held by bob@example\.com since \d\d:\d\d \S+\. /);
      assert.equal(team.remoteSha(), bobsLanding);
    });

    it("with --no-verify --force the server's pre-receive hook refuses it; the protected branch never moved to alice's commit", async () => {
      const late = await team.gitOk(alice.dir, 'rev-parse', 'HEAD');
      const stderr = refusedByServer(await push(alice, '--no-verify', '--force'), 'alice --no-verify --force');
      assert.match(
        stderr,
        /remote: lockstep: refused refs\/heads\/main: Your grant #1 has ended; the current grant is #2, held by bob@example\.com since \d\d:\d\d \S+\. /,
      );
      assert.equal(team.remoteSha(), bobsLanding, "main is still bob's landing");
      const history = await team.gitOk(team.remote, 'rev-list', 'main');
      assert.ok(!history.includes(late), "alice's late commit is nowhere in main's history");
      const objects = await team.git(team.remote, ['cat-file', '-e', late]);
      assert.notEqual(objects.code, 0, 'the refused push left no objects behind (quarantine discarded)');
    });
  });

  describe('after an operator clear and a new acquisition', () => {
    let landed = '';

    it("bob's lease expires; the operator clears it (with a reason, audited)", async () => {
      await waitUntilExpired(team, carol.dir);
      const cleared = ok(
        await team.lockstep(carol.dir, ['clear', '--reason', 'bob vanished'], { env: { LOCKSTEP_IDENTITY: OPS } }),
        'clear',
      );
      assert.equal(cleared.clearedGrant, 2);
      landed = team.remoteSha();
    });

    it('a cleared grant, not yet succeeded, is refused at both points ("no longer held")', async () => {
      await team.commit(bob, 'cleared.txt');
      assert.match(
        refusedByClient(await push(bob), 'bob after clear'),
        /lockstep: Your grant #2 is no longer held \(the lock was released or cleared\)\. To push: /,
      );
      assert.match(
        refusedByServer(await push(bob, '--no-verify'), 'bob after clear, --no-verify'),
        /remote: lockstep: refused refs\/heads\/main: Grant #2 is no longer held \(the lock was released or cleared\)\. `lockstep status` in your clone says your next step\./,
      );
      assert.equal(team.remoteSha(), landed);
    });

    it('carol acquires grant #3; the old grants #2 and #1 are refused the same way at both points', async () => {
      assert.equal(ok(await team.lockstep(carol.dir, ['acquire']), 'carol acquire').grant, 3);
      const bobClient = refusedByClient(await push(bob), 'bob after new acquisition');
      assert.match(
        bobClient,
        /lockstep: Your grant #2 has ended; the current grant is #3, held by carol@example\.com since \d\d:\d\d \S+\. /,
      );
      const bobServer = refusedByServer(await push(bob, '--no-verify', '--force'), 'bob --no-verify --force');
      assert.match(
        bobServer,
        /remote: lockstep: refused refs\/heads\/main: Your grant #2 has ended; the current grant is #3, held by carol@example\.com since \d\d:\d\d \S+\. /,
      );
      assert.match(
        refusedByClient(await push(alice), 'alice'),
        /Your grant #1 has ended; the current grant is #3, held by carol@example\.com/,
      );
      assert.match(
        refusedByServer(await push(alice, '--no-verify', '--force'), 'alice --no-verify'),
        /Your grant #1 has ended; the current grant is #3, held by carol@example\.com/,
      );
      assert.equal(team.remoteSha(), landed);
    });
  });

  describe("proofs: forged, copied from another grant, missing, and the holder's own", () => {
    const pushWithOptions = (who: TeamMember, options: readonly string[], ...extra: string[]) =>
      team.git(who.dir, [...options.flatMap(o => ['-c', `push.pushOption=${o}`]), 'push', ...extra, 'origin', 'HEAD:refs/heads/main']);
    const proofOf = (who: TeamMember) =>
      /lockstep-proof=([0-9a-f]{64})/.exec(fs.readFileSync(path.join(who.dir, '.git', 'lockstep', 'push.config'), 'utf8'))![1];
    let landed = '';

    before(async () => {
      // eve never acquired: no session, no push.config; her commit sits on top of the remote's main.
      await team.gitOk(eve.dir, 'pull', '--quiet', '--ff-only', 'origin', 'main');
      await team.commit(eve, 'eve.txt');
      landed = team.remoteSha();
      assert.ok(!fs.existsSync(path.join(eve.dir, '.git', 'lockstep', 'push.config')));
    });

    it('no proof at all → refused by the server', async () => {
      assert.match(
        refusedByServer(await push(eve, '--no-verify'), 'eve without proof'),
        /This push carries no proof of grant, and this branch is protected by Lockstep: `lockstep status` in your clone says how to get the lock; push again once you hold it\./,
      );
      assert.match(
        refusedByServer(await pushWithOptions(eve, ['lockstep-grant=3'], '--no-verify'), 'grant without proof'),
        /carries no proof of grant/,
      );
      assert.match(
        refusedByServer(await pushWithOptions(eve, [`lockstep-proof=${proofOf(carol)}`], '--no-verify'), 'proof without grant'),
        /carries no proof of grant/,
      );
    });

    it("a forged proof (64 random hex) for the current grant → refused by the server, and by eve's own hook", async () => {
      const forged = [`lockstep-grant=3`, `lockstep-proof=${randomBytes(32).toString('hex')}`];
      assert.match(
        refusedByServer(await pushWithOptions(eve, forged, '--no-verify'), 'forged proof'),
        /remote: lockstep: refused refs\/heads\/main: The proof presented for grant #3 is not its holder's proof, held by carol@example\.com since \d\d:\d\d \S+\. `lockstep status` in your clone says your next step\./,
      );
      assert.match(
        refusedByClient(await pushWithOptions(eve, forged), 'forged proof through the hook'),
        /lockstep: This clone does not hold the lock; the current grant #3 is held by carol@example\.com, and pushes to protected branches need it\. To hold it: petition to join the queue \(lockstep petition\)\./,
      );
      assert.equal(team.remoteSha(), landed);
    });

    it('a proof copied from another grant → refused by the server, whichever grant number it claims', async () => {
      const alices = proofOf(alice); // grant #1's proof
      const bobs = proofOf(bob); // grant #2's proof
      assert.match(
        refusedByServer(await pushWithOptions(eve, ['lockstep-grant=3', `lockstep-proof=${alices}`], '--no-verify'), 'grant 1 proof as 3'),
        /The proof presented for grant #3 is not its holder's proof/,
      );
      assert.match(
        refusedByServer(await pushWithOptions(eve, ['lockstep-grant=2', `lockstep-proof=${bobs}`], '--no-verify'), 'grant 2 proof as 2'),
        /Your grant #2 has ended; the current grant is #3/,
      );
      assert.match(
        refusedByServer(
          await pushWithOptions(eve, ['lockstep-grant=4', `lockstep-proof=${bobs}`], '--no-verify'),
          'a grant not issued yet',
        ),
        /The proof for grant #4 is not valid for the current grant #3/,
      );
      assert.equal(team.remoteSha(), landed);
    });

    it("the current holder's proof copied into another clone DOES land: like the owner token, it is a bearer secret of the grant", async () => {
      const sha = await team.gitOk(eve.dir, 'rev-parse', 'HEAD');
      ok(await pushWithOptions(eve, ['lockstep-grant=3', `lockstep-proof=${proofOf(carol)}`], '--no-verify'), "eve with carol's proof");
      assert.equal(team.remoteSha(), sha);
    });
  });

  describe('what is not fenced', () => {
    it('unprotected refs pass untouched on both sides, even for a stale holder and a non-holder', async () => {
      const alicesHead = await team.gitOk(alice.dir, 'rev-parse', 'HEAD');
      const feature = await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/feature/alice']);
      ok(feature, 'alice feature push');
      assertGuardsSilent(feature.stderr);
      assert.equal(team.remoteSha('feature/alice'), alicesHead);
      await team.gitOk(eve.dir, 'tag', 'v1');
      const eves = await team.git(eve.dir, ['push', 'origin', 'HEAD:refs/heads/feature/eve', 'refs/tags/v1']);
      ok(eves, 'eve feature + tag push');
      assertGuardsSilent(eves.stderr);
      assert.equal(team.remoteSha('feature/eve'), await team.gitOk(eve.dir, 'rev-parse', 'HEAD'));
    });

    it('deleting the protected branch is fenced like any other update', async () => {
      const before = team.remoteSha();
      assert.match(
        refusedByClient(await team.git(eve.dir, ['push', 'origin', ':refs/heads/main']), 'delete main'),
        /does not hold the lock/,
      );
      assert.match(
        refused(await team.git(eve.dir, ['push', '--no-verify', 'origin', ':refs/heads/main']), 'delete main, --no-verify'),
        /remote: lockstep: refused refs\/heads\/main: This push carries no proof of grant/,
      );
      assert.equal(team.remoteSha(), before);
    });

    it("pushes to another remote pass the client hook; the container's remote under another name does not", async () => {
      const mirror = path.join(team.root, 'mirror.git');
      await team.gitOk(team.root, 'init', '--quiet', '--bare', '--initial-branch=main', mirror);
      await team.gitOk(eve.dir, 'remote', 'add', 'mirror', mirror);
      const toMirror = await team.git(eve.dir, ['push', 'mirror', 'HEAD:refs/heads/main']);
      ok(toMirror, 'eve (non-holder) pushes main to a mirror');
      assertGuardsSilent(toMirror.stderr);
      // alice still has grant #1's push.config (she never released); her options need a remote that takes them.
      await team.gitOk(mirror, 'config', 'receive.advertisePushOptions', 'true');
      await team.gitOk(alice.dir, 'remote', 'add', 'mirror', mirror);
      ok(await team.git(alice.dir, ['push', '--force', 'mirror', 'HEAD:refs/heads/main']), 'stale alice pushes main to a mirror');
      assert.equal(await team.gitOk(mirror, 'rev-parse', 'main'), await team.gitOk(alice.dir, 'rev-parse', 'HEAD'));

      await team.gitOk(alice.dir, 'remote', 'add', 'alias', team.remote);
      assert.match(
        refusedByClient(await team.git(alice.dir, ['push', 'alias', 'HEAD:refs/heads/main']), 'alice via an alias of origin'),
        /Your grant #1 has ended; the current grant is #3/,
      );
    });
  });

  describe('the client guard is not skipped by another spelling of the remote or a checkout without the settings', () => {
    /** Eve's own commit on main for the story's pushes (a push of what the remote has pushes nothing), taken back after. */
    const withEvesCommit = async (story: () => Promise<void>) => {
      const head = await team.gitOk(eve.dir, 'rev-parse', 'HEAD');
      await team.gitOk(eve.dir, 'commit', '--quiet', '--allow-empty', '-m', "eve's unfenced attempt");
      try {
        await story();
      } finally {
        await team.gitOk(eve.dir, 'checkout', '--quiet', '--force', 'main');
        await team.gitOk(eve.dir, 'reset', '--quiet', '--hard', head);
      }
    };

    it("the container's repository named by file://, a relative path or a trailing slash is fenced as origin is", async () => {
      const before = team.remoteSha();
      const relative = path.relative(eve.dir, team.remote);
      await withEvesCommit(async () => {
        for (const url of [`file://${team.remote}`, `${team.remote}/`, relative, `${relative}/`]) {
          assert.match(
            refusedByClient(await team.git(eve.dir, ['push', url, 'HEAD:refs/heads/main']), `eve pushes main to ${url}`),
            /does not hold the lock/,
          );
        }
        await team.gitOk(eve.dir, 'remote', 'add', 'slashed', `${team.remote}/`);
        assert.match(
          refusedByClient(await team.git(eve.dir, ['push', 'slashed', 'HEAD:refs/heads/main']), 'eve via slashed'),
          /does not hold the lock/,
        );
      });
      assert.equal(team.remoteSha(), before);
    });

    it('a checkout of a branch from before the container, or whose .lockstep.json is empty or garbled, cannot push a protected branch', async () => {
      const before = team.remoteSha();
      await withEvesCommit(() => oldCheckouts());
      assert.equal(team.remoteSha(), before);
    });

    const oldCheckouts = async () => {
      const root = await team.gitOk(eve.dir, 'rev-list', '--max-parents=0', 'HEAD');
      assert.equal(
        (await team.git(eve.dir, ['cat-file', '-e', `${root}:.lockstep.json`])).code,
        128,
        'the first commit predates the container',
      );
      await team.gitOk(eve.dir, 'checkout', '--quiet', '-b', 'old-base', root);
      try {
        assert.match(
          refusedByClient(await team.git(eve.dir, ['push', 'origin', 'main']), 'eve pushes main from an old checkout'),
          /The push of main is refused: this checkout has no \.lockstep\.json, but the default branch of origin commits one/,
        );
        ok(await team.git(eve.dir, ['push', 'origin', 'HEAD:refs/heads/feature/old-base']), 'an unprotected branch still goes');
        // status says where the settings are, not to pull what the clone has pulled.
        const status = await team.lockstep(eve.dir, ['status']);
        assert.match(status.stderr + status.stdout, /The checked-out branch has no \.lockstep\.json, but main has it/);
      } finally {
        await team.gitOk(eve.dir, 'checkout', '--quiet', 'main');
      }
      for (const [label, text] of [
        ['empty', ''],
        ['garbled', '{bad'],
      ]) {
        await team.gitOk(eve.dir, 'checkout', '--quiet', '-b', `settings-${label}`);
        try {
          fs.writeFileSync(path.join(eve.dir, '.lockstep.json'), text);
          await team.gitOk(eve.dir, 'commit', '--quiet', '-am', `${label} settings`);
          refusedByClient(await team.git(eve.dir, ['push', 'origin', 'HEAD:refs/heads/main']), `eve pushes main with ${label} settings`);
        } finally {
          await team.gitOk(eve.dir, 'checkout', '--quiet', '--force', 'main');
        }
      }
    };
  });

  describe('release and the push proof', () => {
    it('release is refused before the push and allowed after; then push.config is gone and pushes are fenced again', async () => {
      const config = path.join(carol.dir, '.git', 'lockstep', 'push.config');
      await team.gitOk(carol.dir, 'pull', '--quiet', '--rebase', 'origin', 'main');
      const sha = await team.commit(carol, 'c.txt');
      const early = await team.lockstep(carol.dir, ['release']);
      assert.equal(early.code, 1);
      assert.equal(early.json.error.reason, 'not-landed');
      assert.match(early.json.error.message, /Release is valid only after a push: you have 1 commit not on origin\/main/);
      assert.ok(fs.existsSync(config), 'a refused release keeps the proof');

      const pushed = await push(carol);
      ok(pushed, 'carol push');
      assert.match(pushed.stderr, /lockstep: grant #3 verified for main\./);
      assert.equal(team.remoteSha(), sha);
      ok(await team.lockstep(carol.dir, ['release']), 'release after the push');
      assert.ok(!fs.existsSync(config), 'release removed push.config');
      assert.ok(!fs.existsSync(path.join(carol.dir, '.git', 'lockstep', 'session.json')), 'release removed the session');
      assert.deepEqual(await team.pushOptions(carol), [], 'no push option is left');

      await team.commit(carol, 'after-release.txt');
      assert.match(
        refusedByClient(await push(carol), 'push after release'),
        /lockstep: This clone does not hold the lock, and pushes to protected branches need it\. To hold it: acquire it now \(lockstep acquire\)\./,
      );
      assert.match(refusedByServer(await push(carol, '--no-verify'), 'push after release, --no-verify'), /carries no proof of grant/);
      assert.equal(team.remoteSha(), sha);
    });
  });

  describe('secrets', () => {
    it("no owner token or proof ever appeared in any output, in git's trace of every command line, or in the hooks", () => {
      const hooks = [
        fs.readFileSync(path.join(alice.dir, '.git', 'hooks', 'pre-push'), 'utf8'),
        fs.readFileSync(path.join(team.remote, 'hooks', 'pre-receive'), 'utf8'),
        fs.readFileSync(path.join(team.remote, 'hooks', 'lockstep-server.json'), 'utf8'),
      ];
      for (const hook of hooks) assert.doesNotMatch(hook, /[0-9a-f]{64}/, 'a hook holds no token or proof');
      // The guards get only git's own arguments (remote name and URL) and read the refs on stdin.
      assert.match(hooks[0], /"\$node_bin" "\$cli" guard pre-push "\$@"\n$/);
      assert.match(hooks[1], /"\$node_bin" "\$cli" guard pre-receive --settings '[^']+\/lockstep-server\.json'\n$/);
      assert.equal(team.secrets().length, 6, 'the tokens and proofs of grants #1 to #3 were seen');
      // git's trace prints the environment it hands the server's hook, and git itself passes push
      // options there (GIT_PUSH_OPTION_n, never argv): that is the only place the proof may show.
      const argvOnly = traces.map(t => t.replace(/GIT_PUSH_OPTION_\d+=lockstep-proof=[0-9a-f]{64}/g, 'GIT_PUSH_OPTION_n=…'));
      assert.ok(
        argvOnly.every((t, i) => t !== traces[i]),
        'the trace saw the proof handed to the hook as a push option',
      );
      team.assertNoSecretLeaked([...hooks, ...argvOnly]);
      const store = storeTexts(team.store);
      for (const secret of team.secrets())
        assert.ok(
          store.every(text => !text.includes(secret)),
          'the store holds hashes only',
        );
    });
  });
});

describe('fencing fails closed (damaged record, unreachable backend)', function () {
  this.timeout(120_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember;
  const push = (...extra: string[]) => team.git(alice.dir, ['push', ...extra, 'origin', 'HEAD:refs/heads/main']);

  before(async () => {
    team = await createFencingTeam({ members: ['alice', 'bob'] });
    [alice, bob] = team.members;
    ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquire');
  });
  after(() => team?.dispose());

  /** The file store's current revision of the container record: the newest file of the `r…` cell. */
  function recordFile(): string {
    const cells = walk(team.store).dirs.filter(d => path.basename(d).startsWith('r'));
    assert.equal(cells.length, 1, 'one container record in the store');
    const revisions = fs
      .readdirSync(cells[0])
      .filter(f => /^\d{16}\.json$/.test(f))
      .sort();
    return path.join(cells[0], revisions[revisions.length - 1]);
  }

  it('a damaged record refuses at both hooks with a message that says so; unprotected refs still pass', async () => {
    const file = recordFile();
    const link = fs.lstatSync(file).isSymbolicLink();
    const saved = storedText(file);
    const landed = team.remoteSha();
    await team.commit(alice, 'a.txt');
    fs.rmSync(file);
    fs.writeFileSync(file, '{ "l": ["damaged"', { mode: 0o600 });
    try {
      const client = refusedByClient(await push(), 'push with a damaged record');
      assert.match(client, /lockstep: The push is refused because the lock could not be checked — A lock record file is damaged/);
      const server = refused(await push('--no-verify'), 'push --no-verify with a damaged record');
      assert.match(
        server,
        /remote: lockstep: refs\/heads\/main is protected and the lock could not be checked, so the push is refused — A lock record file is damaged/,
      );
      const direct = await team.lockstep(alice.dir, ['guard', 'pre-push', 'origin', team.remote], {
        json: false,
        input: `refs/heads/main ${'a'.repeat(40)} refs/heads/main ${landed}\n`,
      });
      assert.equal(direct.code, 5, 'guard pre-push exits 5 (damaged record)');
      ok(await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/feature/x']), 'a feature branch needs no record');
      assert.equal(team.remoteSha(), landed);
    } finally {
      fs.rmSync(file);
      if (link) fs.symlinkSync(saved, file);
      else fs.writeFileSync(file, saved, { encoding: 'latin1', mode: 0o600 });
    }
    ok(await push(), 'the same push once the record is repaired');
  });

  it("an unreachable backend refuses at both hooks (the store's path is a regular file)", async () => {
    const notAFolder = path.join(team.root, 'not-a-folder');
    fs.writeFileSync(notAFolder, 'x');
    const landed = team.remoteSha();
    await team.commit(alice, 'b.txt');
    // The page's location is committed (LOCKSTEP_PATH alone may not move it): alice's working copy of .lockstep.json points at the broken folder too.
    const containerFile = path.join(alice.dir, '.lockstep.json');
    const committed = fs.readFileSync(containerFile, 'utf8');
    fs.writeFileSync(containerFile, JSON.stringify({ ...JSON.parse(committed), path: notAFolder }));
    let client: string;
    try {
      client = refusedByClient(
        await team.git(alice.dir, ['push', 'origin', 'HEAD:refs/heads/main'], { env: { LOCKSTEP_PATH: notAFolder } }),
        'client with a broken backend',
      );
    } finally {
      fs.writeFileSync(containerFile, committed);
    }
    assert.match(client, /lockstep: The push is refused because the lock could not be checked — The lock storage folder could not be used/);

    // The server's store is what was pinned at install: point it at the broken folder there.
    const envFile = path.join(team.remote, 'hooks', 'lockstep-server.json');
    const saved = fs.readFileSync(envFile, 'utf8');
    fs.writeFileSync(envFile, JSON.stringify({ ...JSON.parse(saved), store: { path: notAFolder } }));
    try {
      const server = refused(await push('--no-verify'), 'server with a broken backend');
      assert.match(
        server,
        /remote: lockstep: refs\/heads\/main is protected and the lock could not be checked, so the push is refused — The lock storage folder could not be used/,
      );
      assert.equal(team.remoteSha(), landed);
    } finally {
      fs.writeFileSync(envFile, saved);
    }
    ok(await push(), 'the same push once the backend is back');
    team.assertNoSecretLeaked();
  });

  it("a failure to arrange the push proof leaves nothing half-acquired (bob's .git/config is locked)", async () => {
    ok(await team.lockstep(alice.dir, ['release']), 'alice releases');
    const lock = path.join(bob.dir, '.git', 'config.lock');
    fs.writeFileSync(lock, '');
    try {
      const failed = await team.lockstep(bob.dir, ['acquire']);
      assert.notEqual(failed.code, 0, 'acquire cannot arrange the proof');
      assert.match(failed.json.error.message, /push proof/);
      const seen = ok(await team.lockstep(bob.dir, ['status']), 'status');
      assert.equal(seen.holder, null, 'nothing was acquired');
      assert.equal(seen.grant, 1);
      assert.ok(!fs.existsSync(path.join(bob.dir, '.git', 'lockstep', 'session.json')));
    } finally {
      fs.rmSync(lock, { force: true });
    }
    assert.equal(ok(await team.lockstep(bob.dir, ['acquire']), 'acquire once .git/config is free').grant, 2);
    assert.equal((await team.pushOptions(bob))[0], 'lockstep-grant=2');
    team.assertNoSecretLeaked();
  });
});
