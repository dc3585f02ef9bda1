import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { finished } from './children';
import { type ForgeStep, githubCache, gitlabCache, resolveEnv, resolveValue } from './forgeSteps';

/**
 * One run of a shipped forge check (docs/forges/), as the forge runs it: a clean clone of the
 * repository at the commit under check, `lockstep` on the PATH as `npm install --global` puts it,
 * the job's variables with the forge's values, the step's command line under `bash -e`, and the job's
 * cache as the file configures it — `cache` stands for the forge's cache (its newest entry): restored
 * into the folder the file names before the step, saved from it after the step when the file says
 * it is saved (GitHub's `if:` of the save step, GitLab's `when:`).
 */
export interface ShippedCheckRun {
  readonly step: ForgeStep;
  /** A folder of its own for this run (the runner). */
  readonly dir: string;
  /** What the forge clones. */
  readonly remote: string;
  readonly checkout: string;
  /** The forge's values of the expressions the file names (`github.event.before`, `CI_COMMIT_SHA`, `secrets.…`). */
  readonly context: Readonly<Record<string, string>>;
  /** The forge's cache of this job (a folder; absent or empty: nothing to restore yet). */
  readonly cache: string;
  /** The runner's environment (HOME, git settings) under the job's variables. */
  readonly env: NodeJS.ProcessEnv;
  /** The CLI bundle `lockstep` runs. */
  readonly cli: string;
}

export async function runShippedCheck(run: ShippedCheckRun): Promise<{ code: number | null; out: string; summary: string }> {
  const work = path.join(run.dir, 'work');
  const bin = path.join(run.dir, 'bin');
  const temp = path.join(run.dir, 'temp');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(temp, { recursive: true });
  execFileSync('git', ['clone', '--quiet', run.remote, work], { env: run.env, stdio: 'ignore' });
  execFileSync('git', ['-C', work, 'checkout', '--quiet', '--detach', run.checkout], { env: run.env, stdio: 'ignore' });
  fs.writeFileSync(path.join(bin, 'lockstep'), `#!/bin/sh\nexec "${process.execPath}" "${run.cli}" "$@"\n`, { mode: 0o755 });
  const context = { ...run.context, 'runner.temp': temp, CI_PROJECT_DIR: work };
  const { folder, saved } = cacheOf(run.step, context, work);
  if (fs.existsSync(run.cache)) fs.cpSync(run.cache, folder, { recursive: true });
  const summary = path.join(run.dir, 'step-summary.md');
  const env = {
    ...run.env,
    PATH: `${bin}${path.delimiter}${process.env.PATH}`,
    GITHUB_STEP_SUMMARY: summary,
    ...resolveEnv(run.step, context),
  };
  const done = await finished(spawn('bash', ['-e', '-c', run.step.run], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] }), 60_000);
  if ((saved === 'always' || done.code === 0) && fs.existsSync(folder)) {
    fs.rmSync(run.cache, { recursive: true, force: true });
    fs.cpSync(folder, run.cache, { recursive: true });
  }
  return { code: done.code, out: done.stdout + done.stderr, summary: fs.existsSync(summary) ? fs.readFileSync(summary, 'utf8') : '' };
}

/** The folder the job's cache holds, resolved on this runner, and whether a failed step's folder is saved too. */
function cacheOf(
  step: ForgeStep,
  context: Readonly<Record<string, string>>,
  work: string,
): { folder: string; saved: 'always' | 'success' } {
  if (step.forge === 'github') {
    const { restore, save } = githubCache(step.file, step.job);
    if (restore.path !== save.path) throw new Error(`${step.job}: the cache restores ${restore.path} and saves ${save.path}`);
    return { folder: resolveValue(restore.path, context), saved: save.saved === 'always()' ? 'always' : 'success' };
  }
  const cache = gitlabCache(step.file, step.job);
  return { folder: path.join(work, cache.path), saved: cache.saved === 'always' ? 'always' : 'success' };
}
