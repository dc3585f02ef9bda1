import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { announcedArguments, gitProcessArguments, type ProcessReading, unseenCommandLine } from '../../src/cli/guard/pushArguments';
import { parsePushArguments, pushArgumentsOf } from '../../src/core/guard/pushCommandLine';
import { waitFor } from '../helpers/waitFor';

/**
 * How the pre-push guard reads the command line of the `git push` that runs it, on each system: a real
 * process stands for git (its argv shaped like a push), read by /proc on Linux and by the real `ps`
 * with macOS's behaviour forced (no /proc).
 */
const real = (platform: NodeJS.Platform, overrides: Partial<ProcessReading> = {}): ProcessReading => ({
  platform,
  readProc: pid => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
  runPs: pid => execFileSync('ps', ['-o', 'args=', '-p', pid], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
  ...overrides,
});
const noProc = () => {
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};

describe('the push command line, as each system shows it', function () {
  this.timeout(10_000);
  let git: ChildProcess;
  let pid: string;
  // A process whose argv reads like `git push --signed -o ci.skip origin main` (node ignores the words after the script).
  const ARGV = ['-e', 'setInterval(() => {}, 1000)', 'push', '--signed', '-o', 'ci.skip', 'origin', 'main'];

  before(async () => {
    git = spawn(process.execPath, ARGV, { stdio: 'ignore' });
    pid = String(git.pid);
    await waitFor(() => fs.existsSync(`/proc/${pid}`) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main'), {
      timeoutMs: 5_000,
      description: 'the stand-in process started',
    });
  });
  after(() => git.kill());

  it('on Linux: /proc gives the exact words', () => {
    const argv = gitProcessArguments(pid, real('linux'));
    assert.deepEqual(argv?.slice(1), ARGV);
  });

  it('on macOS (no /proc): ps -o args= gives the words, and the push reads the same (signed, one push option)', () => {
    const argv = gitProcessArguments(pid, real('darwin', { readProc: noProc }));
    assert.ok(argv, 'ps answered');
    assert.deepEqual(argv.slice(-6), ARGV.slice(-6));
    const fromPs = parsePushArguments(pushArgumentsOf(['git', ...argv.slice(-6)], new Map()) ?? []);
    assert.equal(fromPs.signed, 'always');
    assert.deepEqual(fromPs.pushOptions, ['ci.skip']);
    assert.deepEqual(gitProcessArguments(pid, real('linux', { readProc: noProc })), argv, 'Linux without /proc mounted asks ps too');
  });

  it('on macOS: a process that is gone, or ps failing, shows nothing (undefined), never a guess', () => {
    assert.equal(gitProcessArguments('999999999', real('darwin', { readProc: noProc })), undefined);
    assert.equal(gitProcessArguments(pid, real('darwin', { readProc: noProc, runPs: noProc })), undefined);
  });

  it("on Windows: nothing is read; a push that would carry the proof is refused unless it is Lockstep's own, which announces its words", () => {
    assert.equal(gitProcessArguments(pid, real('win32')), undefined);
    assert.match(
      unseenCommandLine('win32', undefined) ?? '',
      /^On Windows Lockstep cannot read this git push's command line.*lockstep release --push.*git -c push\.pushOption= push …$/,
    );
    const announced = announcedArguments({ LOCKSTEP_PUSH_ARGUMENTS: JSON.stringify(['git', 'push', '--porcelain', 'origin', 'main']) });
    assert.deepEqual(announced, ['git', 'push', '--porcelain', 'origin', 'main']);
    assert.equal(unseenCommandLine('win32', announced), undefined);
    assert.equal(announcedArguments({ LOCKSTEP_PUSH_ARGUMENTS: '{"not":"a list"}' }), undefined);
    assert.equal(unseenCommandLine('linux', undefined), undefined, 'elsewhere a guard run by hand is judged by configuration, as before');
  });
});
