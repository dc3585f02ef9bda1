import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './children';

/**
 * A minimal reader of the shipped forge files (no YAML library is a dependency): the command lines
 * of a job (`run:` of a GitHub step, `- ` lines of a GitLab `script:`) and the variables the job
 * gives them (the step's `env:` / the job's `variables:`), as text. Enough to run exactly what the
 * forge would run, and nothing the files do not say.
 */
export interface ForgeStep {
  readonly forge: 'github' | 'gitlab';
  /** The shipped file (relative to the repository) and the job in it. */
  readonly file: string;
  readonly job: string;
  readonly run: string;
  /** Variable → its value expression as written (`${{ github.event.before }}`, `$CI_COMMIT_SHA`). */
  readonly env: Readonly<Record<string, string>>;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** The lines of the block that starts under `header` (a line equal to it after trimming), within `from`. */
function blockUnder(lines: readonly string[], header: string, from = 0, to = lines.length): { start: number; end: number } | undefined {
  const at = lines.findIndex((l, i) => i >= from && i < to && l.trim() === header);
  if (at < 0) return undefined;
  const indent = indentOf(lines[at]);
  let end = at + 1;
  while (end < to && (lines[end].trim() === '' || indentOf(lines[end]) > indent)) end++;
  return { start: at + 1, end };
}

function mapping(lines: readonly string[], block: { start: number; end: number } | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!block) return out;
  for (const line of lines.slice(block.start, block.end)) {
    const m = /^\s*([A-Z_][A-Z0-9_]*):\s*(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return out;
}

/** The GitHub workflow's step of `job` whose `run:` is a `lockstep verify` line. */
export function githubVerifyStep(file: string, job: string): ForgeStep {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const jobBlock = blockUnder(lines, `${job}:`);
  if (!jobBlock) throw new Error(`no job ${job} in ${file}`);
  const runAt = lines.findIndex((l, i) => i >= jobBlock.start && i < jobBlock.end && /^\s*run: lockstep verify /.test(l));
  if (runAt < 0) throw new Error(`no lockstep verify step in ${job}`);
  // The step's env: the block between the step's start (`- `) and its run line.
  let stepStart = runAt;
  while (stepStart > jobBlock.start && !/^\s*- /.test(lines[stepStart])) stepStart--;
  const env = mapping(lines, blockUnder(lines, 'env:', stepStart, runAt));
  return { forge: 'github', file, job, run: lines[runAt].trim().slice('run: '.length), env };
}

/** The GitLab job's `lockstep verify` script line and the job's variables. */
export function gitlabVerifyStep(file: string, job: string): ForgeStep {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const jobBlock = blockUnder(lines, `${job}:`);
  if (!jobBlock) throw new Error(`no job ${job} in ${file}`);
  const script = blockUnder(lines, 'script:', jobBlock.start, jobBlock.end);
  const run = lines
    .slice(script?.start ?? 0, script?.end ?? 0)
    .map(l => l.trim())
    .find(l => l.startsWith('- lockstep verify '));
  if (run === undefined) throw new Error(`no lockstep verify line in ${job}`);
  return {
    forge: 'gitlab',
    file,
    job,
    run: run.slice(2),
    env: mapping(lines, blockUnder(lines, 'variables:', jobBlock.start, jobBlock.end)),
  };
}

/** Every command line of a forge file that runs lockstep (to check that the tests ran all of them). */
export function lockstepLines(file: string): string[] {
  return fs
    .readFileSync(path.join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .map(l =>
      l
        .trim()
        .replace(/^- /, '')
        .replace(/^run: /, ''),
    )
    .filter(l => l.startsWith('lockstep '));
}

/** The variables' values as the forge sets them: each expression looked up in `context` (a secret not set: empty). */
export function resolveEnv(step: ForgeStep, context: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, expression] of Object.entries(step.env)) out[name] = resolveValue(expression, context);
  return out;
}

/** One value as the forge expands it: `${{ a.b }}` (GitHub) and `$NAME` (GitLab) looked up in `context`; the rest literal. */
export function resolveValue(expression: string, context: Readonly<Record<string, string>>): string {
  const look = (key: string) => {
    if (key.startsWith('secrets.')) return context[key] ?? '';
    if (!(key in context)) throw new Error(`the test gives no value for ${key}`);
    return context[key];
  };
  return expression.replace(
    /\$\{\{\s*(.+?)\s*\}\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_, github: string | undefined, name: string | undefined) => look(github ?? name!),
  );
}

/** Where a job keeps what its cache restores and saves, as the file says it. */
export interface ForgeCache {
  /** The folder the cache holds, as written (GitHub: a path expression; GitLab: relative to the project folder). */
  readonly path: string;
  readonly key: string;
  /** GitHub: the prefix the newest entry is restored by. */
  readonly restoreKeys?: string;
  /** When it is saved: GitHub's save step `if:`, GitLab's `when:`. */
  readonly saved: string;
}

function withBlock(lines: readonly string[], at: number, end: number): Record<string, string> {
  const out: Record<string, string> = {};
  const block = blockUnder(lines, 'with:', at, end);
  if (!block) return out;
  for (const line of lines.slice(block.start, block.end)) {
    const m = /^\s*([a-z][a-z-]*):\s*(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** The GitHub job's `actions/cache/restore` and `actions/cache/save` steps. */
export function githubCache(file: string, job: string): { restore: ForgeCache; save: ForgeCache } {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const jobBlock = blockUnder(lines, `${job}:`);
  if (!jobBlock) throw new Error(`no job ${job} in ${file}`);
  const step = (uses: string) => {
    const at = lines.findIndex((l, i) => i >= jobBlock.start && i < jobBlock.end && l.trim() === `- uses: ${uses}`);
    if (at < 0) throw new Error(`no ${uses} step in ${job}`);
    let end = at + 1;
    while (end < jobBlock.end && !/^\s*- /.test(lines[end])) end++;
    const condition = lines.slice(at, end).find(l => /^\s*if:/.test(l));
    const w = withBlock(lines, at, end);
    return {
      path: w.path ?? '',
      key: w.key ?? '',
      ...(w['restore-keys'] !== undefined ? { restoreKeys: w['restore-keys'] } : {}),
      saved: condition?.trim().slice('if:'.length).trim() ?? 'success()',
    };
  };
  return { restore: step('actions/cache/restore@v4'), save: step('actions/cache/save@v4') };
}

/** The GitLab job's `cache:` (its one path). */
export function gitlabCache(file: string, job: string): ForgeCache & { paths: string[] } {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const jobBlock = blockUnder(lines, `${job}:`);
  if (!jobBlock) throw new Error(`no job ${job} in ${file}`);
  const cache = blockUnder(lines, 'cache:', jobBlock.start, jobBlock.end);
  if (!cache) throw new Error(`no cache in ${job}`);
  const body = lines.slice(cache.start, cache.end).map(l => l.trim());
  const value = (key: string) =>
    body
      .find(l => l.startsWith(`${key}:`))
      ?.slice(key.length + 1)
      .trim() ?? '';
  const paths = body.filter(l => l.startsWith('- ')).map(l => l.slice(2));
  return { path: paths[0] ?? '', paths, key: value('key'), saved: value('when') || 'on_success' };
}
