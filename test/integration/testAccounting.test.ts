/**
 * The test command's accounting (scripts/accounting.sh, scripts/tally.mjs), run as scripts/test-all.sh runs it:
 * real bash processes run a folder of suite scripts through `run_suites`, then `tally_summary` prints the last
 * line. Whatever goes wrong in a suite — a crash before reporting, zero tests, a skip in CI, an unreadable line —
 * the last line shows a failure and the exit status is non-zero; the two always agree.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scaled } from '../helpers/calibration';
import { childEnv, finished, REPO_ROOT } from '../helpers/children';
import { useTempDir } from '../helpers/tempDir';

const LAST_LINE = /^(\d+) passed, (\d+) failed, (\d+) skipped$/;

interface Summary {
  code: number | null;
  passed: number;
  failed: number;
  skipped: number;
  behaviours: number;
  tally: any[];
  output: string;
}

describe('test accounting (scripts/accounting.sh + scripts/tally.mjs)', function () {
  this.timeout(60_000);
  const tmp = useTempDir('lockstep-accounting');

  /** Writes each suite script into a fresh folder, runs them all as test-all.sh does, and reads the last lines. */
  async function runSuites(suites: Record<string, string>, env: Record<string, string> = {}): Promise<Summary> {
    const dir = path.join(tmp.path, 'suites');
    fs.mkdirSync(dir);
    for (const [name, body] of Object.entries(suites)) fs.writeFileSync(path.join(dir, `${name}.sh`), `set -uo pipefail\n${body}\n`);
    const tally = path.join(tmp.path, 'tally.jsonl');
    const script = `source scripts/accounting.sh\nexport LOCKSTEP_TALLY=${JSON.stringify(tally)}\n: > "$LOCKSTEP_TALLY"\nrun_suites ${JSON.stringify(dir)}\ntally_summary\n`;
    const done = await finished(
      spawn('bash', ['-c', script], {
        cwd: REPO_ROOT,
        env: childEnv({ CI: '', ...env }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      scaled(50_000),
    ); // a deadline from an unloaded machine, scaled like every other (test/helpers/calibration.ts)
    const lines = done.stdout.trimEnd().split('\n');
    const last = LAST_LINE.exec(lines[lines.length - 1]);
    assert.ok(last, `the last line is "N passed, N failed, N skipped"; output:\n${done.stdout}\n${done.stderr}`);
    const behaviours = /^(\d+) distinct behaviours ran/.exec(lines[lines.length - 2]);
    assert.ok(behaviours, `the line before the last counts the distinct behaviours; output:\n${done.stdout}`);
    const [passed, failed, skipped] = last.slice(1).map(Number);
    const recorded = fs
      .readFileSync(tally, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(l => {
        try {
          return JSON.parse(l);
        } catch {
          return l;
        }
      });
    return {
      code: done.code,
      passed,
      failed,
      skipped,
      behaviours: Number(behaviours[1]),
      tally: recorded,
      output: done.stdout + done.stderr,
    };
  }

  const reports = (suite: string, p: number, f: number, s: number) =>
    `echo '{"suite":"${suite}","passed":${p},"failed":${f},"skipped":${s}}' >> "$LOCKSTEP_TALLY"`;

  it('passes when every runner reports passing tests, and the exit status says so', async () => {
    const run = await runSuites({ good: reports('good', 3, 0, 1) });
    assert.deepEqual([run.code, run.passed, run.failed, run.skipped], [0, 3, 0, 1], run.output);
  });

  it('counts a suite that crashes before reporting as a failure, beside other suites that passed', async () => {
    const run = await runSuites({ a: reports('a', 5, 0, 0), crash: 'echo "SyntaxError: boom" >&2; exit 3' });
    assert.equal(run.failed, 1, run.output);
    assert.equal(run.passed, 5);
    assert.notEqual(run.code, 0);
    assert.ok(
      run.tally.some(l => l.suite === 'crash' && /exited 3 before reporting/.test(l.note)),
      JSON.stringify(run.tally),
    );
  });

  it("counts each runner of a suite that does not report, even when the suite's other runners did (per runner, not per suite)", async () => {
    const suite = [
      'source scripts/accounting.sh',
      `run_reported one bash -c ${JSON.stringify(reports('one', 20, 0, 0))}`,
      'run_reported two bash -c "exit 1"', // a runner that dies before its line, like a top-level throw
      `run_reported three bash -c ${JSON.stringify(reports('three', 5, 0, 0))}`,
      'exit 1',
    ].join('\n');
    const run = await runSuites({ multi: suite });
    assert.deepEqual([run.passed, run.failed], [25, 1], run.output);
    assert.notEqual(run.code, 0);
    assert.ok(
      run.tally.some(l => l.suite === 'two'),
      JSON.stringify(run.tally),
    );
  });

  it('counts a runner that exits non-zero after reporting no failure as a failure', async () => {
    const run = await runSuites({ liar: `${reports('liar', 4, 0, 0)}; exit 2` });
    assert.equal(run.failed, 1, run.output);
    assert.notEqual(run.code, 0);
  });

  it('counts a suite that reports zero tests as a failure', async () => {
    const run = await runSuites({ empty: reports('empty', 0, 0, 0) });
    assert.deepEqual([run.passed, run.failed, run.skipped], [0, 1, 0], run.output);
    assert.notEqual(run.code, 0);
  });

  it('counts a mocha run that finds no test as a failure', async () => {
    const spec = path.join(tmp.path, 'none.test.js');
    fs.writeFileSync(spec, '// no tests here\n');
    const run = await runSuites({ mocha: `npx mocha --reporter ./scripts/tally-reporter.cjs ${JSON.stringify(spec)}` });
    assert.deepEqual([run.passed, run.failed], [0, 1], run.output);
    assert.notEqual(run.code, 0);
  });

  it('counts an unreadable tally line as a failure', async () => {
    const run = await runSuites({ a: reports('a', 2, 0, 0), garbled: 'echo \'{"suite":"garbled","passed":"lots"\' >> "$LOCKSTEP_TALLY"' });
    assert.deepEqual([run.passed, run.failed], [2, 1], run.output);
    assert.notEqual(run.code, 0);
  });

  it('runs a suite marked beside-next beside the one after it, each credited with its own lines only', async () => {
    // Each waits (with a deadline) for the other to have started: one after the other, the first would fail.
    const meets = (me: string, other: string) =>
      [
        `touch "$MEET/${me}"`,
        `for _ in $(seq 1 200); do [ -e "$MEET/${other}" ] && break; sleep 0.1; done`,
        `if [ -e "$MEET/${other}" ]; then ${reports(me, 1, 0, 0)}; else ${reports(me, 0, 1, 0)}; fi`,
      ].join('\n');
    const meet = path.join(tmp.path, 'meet');
    fs.mkdirSync(meet);
    const run = await runSuites(
      {
        a: `# lockstep-suite: beside-next\n${meets('a', 'b')}`,
        b: meets('b', 'a'),
        // Marked, but it crashes before reporting while the next one reports: the next one's line is not its.
        c: '# lockstep-suite: beside-next\necho "SyntaxError: boom" >&2; exit 3',
        d: reports('d', 2, 0, 0),
      },
      { MEET: meet },
    );
    assert.deepEqual([run.code, run.passed, run.failed], [1, 4, 1], run.output);
    const crashed = run.tally.find(l => l.suite === 'c');
    assert.match(crashed?.note ?? '', /exited 3 before reporting/, run.output);
    assert.match(run.output, /=== suite: a, beside the next[\s\S]*=== suite: b [\s\S]*=== suite: a \(ran beside b/);
  });

  it('starts a suite marked beside-others before all the others and runs it beside each of them, credited with its own lines only', async () => {
    // z comes last by name but must already run when a starts, and still run when b (after a) starts: each waits,
    // with a deadline, for the other to have started, so one after the other they would fail.
    const waitsFor = (me: string, others: readonly string[]) =>
      [
        `touch "$MEET/${me}"`,
        `for _ in $(seq 1 200); do ${others.map(o => `[ -e "$MEET/${o}" ]`).join(' && ')} && break; sleep 0.1; done`,
        `if ${others.map(o => `[ -e "$MEET/${o}" ]`).join(' && ')}; then ${reports(me, 1, 0, 0)}; else ${reports(me, 0, 1, 0)}; fi`,
      ].join('\n');
    const meet = path.join(tmp.path, 'meet-others');
    fs.mkdirSync(meet);
    const run = await runSuites(
      {
        a: waitsFor('a', ['z']),
        b: waitsFor('b', ['a', 'z']),
        // Marked too, but it crashes before reporting while the others report: none of their lines is its.
        y: '# lockstep-suite: beside-others\necho "SyntaxError: boom" >&2; exit 3',
        z: `# lockstep-suite: beside-others\n${waitsFor('z', ['a', 'b'])}`,
      },
      { MEET: meet },
    );
    assert.deepEqual([run.code, run.passed, run.failed], [1, 3, 1], run.output);
    assert.match(run.tally.find(l => l.suite === 'y')?.note ?? '', /exited 3 before reporting/, run.output);
    assert.match(
      run.output,
      /=== suite: z, beside all the others[\s\S]*=== suite: a [\s\S]*=== suite: b [\s\S]*=== suite: z \(ran beside the others/,
    );
  });

  it('stops a suite that hangs at its time limit and fails it by name, beside a suite that passed', async () => {
    const started = performance.now();
    // The subject: a suite that never ends (a child that sleeps for ten minutes, as a hung mocha run would).
    const run = await runSuites({ a: reports('a', 2, 0, 0), hang: 'sleep 600 & wait' }, { LOCKSTEP_TIMEOUT_HANG: '2' });
    assert.deepEqual([run.passed, run.failed], [2, 1], run.output);
    assert.ok(
      run.tally.some(l => l.suite === 'hang' && /timed out: still running after 2 s/.test(l.note)),
      JSON.stringify(run.tally),
    );
    assert.ok(performance.now() - started < 300_000, 'the hang cost its limit, not its ten minutes');
    assert.notEqual(run.code, 0);
  });

  it("fails a suite as not run once the run's time budget (LOCKSTEP_RUN_DEADLINE) is spent", async () => {
    const run = await runSuites({ late: reports('late', 3, 0, 0) }, { LOCKSTEP_RUN_DEADLINE: String(Math.floor(Date.now() / 1000) - 1) });
    assert.deepEqual([run.passed, run.failed], [0, 1], run.output);
    assert.ok(
      run.tally.some(l => l.suite === 'late' && /not run: the run's time budget was spent/.test(l.note)),
      JSON.stringify(run.tally),
    );
    assert.notEqual(run.code, 0);
  });

  it('fails on nothing reported at all', async () => {
    const run = await runSuites({});
    assert.equal(run.failed, 1, run.output);
    assert.notEqual(run.code, 0);
  });

  for (const config of fs.readdirSync(REPO_ROOT).filter(f => /^\.mocharc\..*\.json$/.test(f))) {
    it(`fails a stray .only under ${config} (forbidOnly)`, async () => {
      const spec = path.join(tmp.path, 'only.test.js');
      fs.writeFileSync(spec, 'it.only("one", () => {}); it("two", () => {});\n');
      // The project's configuration as it is, on this one file instead of its own spec.
      const options = { ...JSON.parse(fs.readFileSync(path.join(REPO_ROOT, config), 'utf8')), spec: [spec] };
      const copy = path.join(tmp.path, config);
      fs.writeFileSync(copy, JSON.stringify(options));
      const run = await runSuites({ only: `npx mocha --config ${JSON.stringify(copy)}` });
      assert.equal(run.passed, 0, run.output);
      assert.ok(run.failed >= 1);
      assert.notEqual(run.code, 0);
    });
  }

  describe('a live backend that is missing (the Redis suite without redis-server)', () => {
    const noRedis = { LOCKSTEP_REDIS_SERVER: '/nonexistent/redis-server' };
    const suite = 'bash scripts/suites/redis.sh';

    for (const ci of ['true', '1', 'TRUE']) {
      it(`fails the run in CI (CI=${ci})`, async () => {
        const run = await runSuites({ redis: suite }, { ...noRedis, CI: ci });
        assert.ok(run.failed >= 1, run.output);
        assert.equal(run.passed, 0);
        assert.notEqual(run.code, 0);
      });
    }

    it('outside CI is skipped loudly, counting every test it did not run, and the run passes', async () => {
      const run = await runSuites({ redis: suite }, noRedis);
      assert.equal(run.failed, 0, run.output);
      assert.ok(run.skipped > 10, `every Redis test counts as skipped, not 1: ${run.skipped}`);
      assert.match(run.output, /SKIPPED: redis-server not installed/);
      assert.equal(run.code, 0);
    });
  });

  describe('SQL servers left out (the SQL suite with SQLite only)', () => {
    const suite = 'bash scripts/suites/sql.sh';
    const sqliteOnly = { LOCKSTEP_TEST_SQL_SERVERS: '' };

    it('outside CI: each server counts every test it did not run as skipped (mocha --dry-run), and the run passes', async () => {
      const run = await runSuites({ sql: suite }, sqliteOnly);
      assert.equal(run.failed, 0, run.output);
      assert.ok(run.passed > 10, 'SQLite ran');
      const skipLine = run.tally.find(l => l.suite === 'sql');
      assert.ok(skipLine && skipLine.skipped >= 2 * 20, `MariaDB's and PostgreSQL's tests each counted: ${JSON.stringify(skipLine)}`);
      assert.equal(run.code, 0);
    });

    it('in CI: a server that did not run is a failure', async () => {
      const run = await runSuites({ sql: suite }, { ...sqliteOnly, CI: '1' });
      assert.equal(run.failed, 2, run.output);
      assert.notEqual(run.code, 0);
    });
  });

  it('counts a behaviour once however many backends ran it, on the line before the last', async () => {
    const spec = path.join(tmp.path, 'backends.test.js');
    fs.writeFileSync(
      spec,
      [
        `const { behaviourGroup } = require(${JSON.stringify(path.join(REPO_ROOT, 'test/helpers/behaviours.ts'))});`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: this is the source of a test file, with a template literal in it
        'for (const backend of ["a", "b", "c"]) describe(`contract on ${backend}`, function () {',
        '  behaviourGroup(this, "contract");',
        '  it("claims", () => {}); it("releases", () => {});',
        '});',
        'describe("elsewhere", () => { it("claims", () => {}); });',
      ].join('\n'),
    );
    const run = await runSuites({ mocha: `npx mocha -r tsx/cjs --reporter ./scripts/tally-reporter.cjs ${JSON.stringify(spec)}` });
    assert.equal(run.passed, 7, run.output);
    assert.equal(run.behaviours, 3, 'contract › claims, contract › releases, elsewhere › claims');
    assert.equal(run.code, 0);
  });

  it('counts the tests a failed before-all hook kept from running as failed, not as vanished', async () => {
    const spec = path.join(tmp.path, 'hook.test.js');
    fs.writeFileSync(
      spec,
      [
        // The subject: a set-up that breaks, with three tests below it that therefore never run.
        'describe("set-up breaks", () => { before(() => { throw new Error("boom"); }); it("a", () => {}); it("b", () => {}); describe("deeper", () => { it("c", () => {}); }); });',
        'describe("fine", () => { it("d", () => {}); });',
        // A clean-up that breaks after its tests passed: one failure of its own.
        'describe("clean-up breaks", () => { after(() => { throw new Error("late"); }); it("e", () => {}); });',
      ].join('\n'),
    );
    const run = await runSuites({ mocha: `npx mocha --reporter ./scripts/tally-reporter.cjs ${JSON.stringify(spec)}` });
    assert.deepEqual(
      [run.passed, run.failed],
      [2, 4],
      `a, b and c failed (never ran), the after-all hook once; d and e passed\n${run.output}`,
    );
    assert.match(run.output, /3 test\(s\) did not run because a hook failed/);
    assert.notEqual(run.code, 0);
  });

  it('runs a suite file by file, two at a time, as one runner: sums, one line, and a file that crashed counted as a failure by name (scripts/mocha-files.mjs)', async () => {
    const files = path.join(tmp.path, 'files');
    fs.mkdirSync(files);
    fs.writeFileSync(path.join(files, 'a.test.js'), 'describe("a", () => { it("one", () => {}); it("two", () => {}); });\n');
    fs.writeFileSync(
      path.join(files, 'b.test.js'),
      'describe("b", () => { it("holds", () => {}); it("breaks", () => { throw new Error("no"); }); });\n',
    );
    fs.writeFileSync(path.join(files, 'c.test.js'), 'process.exit(3);\n'); // dies while mocha loads it: reports nothing
    const config = path.join(tmp.path, 'files.mocharc.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ spec: [`${files}/**/*.test.js`], reporter: './scripts/tally-reporter.cjs', timeout: 10_000 }),
    );
    const run = await runSuites({
      files: `source scripts/accounting.sh\nrun_reported files node scripts/mocha-files.mjs --config ${JSON.stringify(config)} --jobs 2`,
    });
    assert.deepEqual([run.passed, run.failed], [3, 2], `one, two and holds passed; breaks failed, and c.test.js once\n${run.output}`);
    const lines = run.tally.filter(l => l.suite === 'files');
    assert.equal(lines.length, 1, 'one line for the whole suite');
    assert.match(lines[0].note, /c\.test\.js: exited 3 before reporting/);
    assert.deepEqual(lines[0].failures, ['b › breaks — no'], 'the failed test named with its error, for the summary');
    assert.match(run.output, /Failed tests .*\n {2}files: b › breaks — no\n/, 'the summary names it under the table');
    assert.equal(run.behaviours, 4, 'a › one, a › two, b › holds, b › breaks');
    assert.notEqual(run.code, 0);
  });

  it('mocha-files refuses a bad --jobs or --idle-jobs with exit 2 and says what it takes', async () => {
    const done = await finished(
      spawn('node', ['scripts/mocha-files.mjs', '--config', '.mocharc.integration.json', '--jobs', '0'], {
        cwd: REPO_ROOT,
        env: childEnv({}),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      scaled(20_000),
    );
    assert.equal(done.code, 2);
    assert.match(done.stderr, /--jobs must be a whole number from 1 to 99, not "0"/);
    // --idle-jobs below --jobs would mean fewer files at a time when the processors idle: refused too.
    const idle = await finished(
      spawn('node', ['scripts/mocha-files.mjs', '--config', '.mocharc.integration.json', '--jobs', '2', '--idle-jobs', '1'], {
        cwd: REPO_ROOT,
        env: childEnv({}),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      scaled(20_000),
    );
    assert.equal(idle.code, 2);
    assert.match(idle.stderr, /--idle-jobs must be a whole number from --jobs \(2\) to 99, not "1"/);
  });

  it('counts a behaviour once however many hosts ran it (the same titles on two runners)', async () => {
    const spec = path.join(tmp.path, 'hosts.test.js');
    fs.writeFileSync(spec, 'describe("badge", () => { it("reads Free", () => {}); it("reads Held", () => {}); });\n');
    const mocha = `npx mocha --reporter ./scripts/tally-reporter.cjs ${JSON.stringify(spec)}`;
    const run = await runSuites({ hosts: `source scripts/accounting.sh\nrun_reported host-old ${mocha}\nrun_reported host-new ${mocha}` });
    assert.equal(run.passed, 4, run.output);
    assert.equal(run.behaviours, 2, 'badge › reads Free and badge › reads Held, once each');
    assert.equal(run.code, 0);
  });

  it('fails the unit suite when a unit test uses more than 100 ms of CPU, naming it; a test that only waits is reported, not failed (test/helpers/unitSpeed.ts)', async () => {
    const spec = path.join(tmp.path, 'speed.test.js');
    fs.writeFileSync(
      spec,
      [
        'describe("timing", () => {',
        '  it("quick", () => {});',
        // The subject of this test is a slow test: it uses 150 ms of CPU time, however busy the machine is.
        '  it("slow", () => { const start = process.cpuUsage(); for (;;) { const u = process.cpuUsage(start); if (u.user + u.system >= 150_000) break; } });',
        // A test that waits 150 ms of wall time uses almost no CPU: on a busy machine every test looks like this.
        '  it("waits", () => new Promise(resolve => setTimeout(resolve, 150)));',
        '});',
      ].join('\n'),
    );
    const run = await runSuites({
      mocha: `npx mocha -r tsx/cjs -r ./test/helpers/unitSpeed.ts --reporter ./scripts/tally-reporter.cjs ${JSON.stringify(spec)}`,
    });
    assert.deepEqual([run.passed, run.failed], [3, 1], run.output);
    assert.match(run.output, /1 unit test\(s\) used more than 100 ms of CPU time[\s\S]*timing slow \(\d+ ms CPU, \d+ ms wall\)/);
    assert.match(run.output, /over 100 ms of wall time but not of CPU time[\s\S]*timing waits \(\d+ ms wall/);
    assert.doesNotMatch(run.output, /timing quick \(/);
    assert.notEqual(run.code, 0);
  });
});
