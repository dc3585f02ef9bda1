import type { ContainerFile } from '../container/containerFile';
import { LockConfigurationError } from '../errors';
import type { GitCommand } from '../git/runner';
import { announcementsIn, judgeSteps, type Announcement } from './landingSteps';
import type { HistoryReach, PushVerdict } from './verdict';
import type { AuditLine } from '../lockRecord';

/**
 * `lockstep verify --push OLD..NEW` (a push event): every first-parent step the push put on a
 * protected branch must have been announced by the live holder before it landed. Defined answers:
 * a branch that is not protected passes (nothing to verify); a new branch (OLD all zeros) is judged
 * by the commits it brings that no other branch of the remote has; a deletion, and a push that
 * rewrites the branch (NEW does not descend from OLD), fail whatever was announced — a protected
 * branch only moves forward.
 */

export interface PushRequest {
  readonly branch: string;
  /** The branch's tip before the push; null for a new branch. */
  readonly old: string | null;
  /** The tip after it; null for a deletion. */
  readonly new: string | null;
  /** The remote the clone was made from (its remote-tracking refs stand for the forge's other branches). */
  readonly remote: string;
}

export async function verifyPush(
  git: GitCommand,
  file: ContainerFile,
  request: PushRequest,
  history: () => Promise<{ lines: AuditLine[]; reach: HistoryReach }>,
): Promise<PushVerdict> {
  const base = { kind: 'push' as const, branch: request.branch, old: request.old, new: request.new };
  const none: HistoryReach = { driver: file.driver, reach: 'page', trimmed: false };
  if (!file.protectedBranches.includes(request.branch)) {
    return {
      ...base,
      outcome: 'passed',
      reasons: [`${request.branch} is not a protected branch of the container: nothing to verify.`],
      steps: [],
      history: none,
    };
  }
  if (request.new === null) {
    return {
      ...base,
      outcome: 'failed',
      reasons: [`The protected branch ${request.branch} was deleted; a protected branch only moves forward (an operator restores it).`],
      steps: [],
      history: none,
    };
  }
  for (const known of [request.old, request.new]) {
    if (known !== null && !(await hasCommit(git, known))) {
      throw new LockConfigurationError(
        `The commit ${known.slice(0, 12)} is not in this clone: run the check in a clone with the branch's full history (GitHub: fetch-depth: 0; GitLab: GIT_DEPTH: "0").`,
        { setting: 'push' },
      );
    }
  }
  const reasons: string[] = [];
  let range: string[];
  let rewritten = false;
  if (request.old === null) {
    // A new branch: the commits it brings are those no other branch of the remote has.
    range = [request.new, '--not', `--exclude=${request.remote}/${request.branch}`, '--exclude=*/HEAD', `--remotes=${request.remote}`];
  } else if (await isAncestor(git, request.old, request.new)) {
    range = [`${request.old}..${request.new}`];
  } else {
    reasons.push(
      `The push rewrote ${request.branch}: ${request.new.slice(0, 12)} does not descend from the old tip ${request.old.slice(0, 12)}, so commits were removed from a protected branch. Restore the old tip (an operator may force it back); a rewrite fails this check whatever was announced.`,
    );
    rewritten = true;
    range = [request.new, '--not', request.old];
  }
  const steps = await firstParents(git, range);
  const { lines, reach } = await history();
  const announcements = announcementsIn(lines);
  const covered = new Map<Announcement, Set<string>>();
  for (const a of announcements.filter(x => x.landing.branch === request.branch && steps.includes(x.landing.to))) {
    const own = a.landing.from === null ? [a.landing.to] : [`${a.landing.from}..${a.landing.to}`];
    covered.set(a, new Set(await firstParents(git, own).catch(() => [a.landing.to])));
  }
  const judged = judgeSteps(steps, request.branch, announcements, a => covered.get(a) ?? new Set());
  const about = await describeCommits(git, steps);
  const missing = judged.filter(s => s.announcedBy === undefined);
  if (missing.length > 0) {
    const names = missing
      .slice(0, 5)
      .map(s => `${s.commit.slice(0, 12)} (${about.get(s.commit)?.author ?? 'unknown author'})`)
      .join(', ');
    reasons.push(
      `${missing.length} of ${steps.length} commit${steps.length === 1 ? '' : 's'} landed on ${request.branch} without an announcement by the live holder: ${names}${missing.length > 5 ? ', …' : ''}.` +
        (reach.reach === 'page' && reach.trimmed
          ? ' The page has dropped old audit lines; an announcement older than its newest transitions cannot be found there.'
          : ''),
    );
  } else if (!rewritten) {
    reasons.push(
      steps.length === 0
        ? `The push brought no new commit to ${request.branch}.`
        : `Every commit that landed on ${request.branch} was announced by the live holder before it landed.`,
    );
  }
  return {
    ...base,
    outcome: missing.length === 0 && !rewritten ? 'passed' : 'failed',
    reasons,
    steps: judged.map(s => ({ ...s, subject: about.get(s.commit)?.subject ?? '', author: about.get(s.commit)?.author ?? '' })),
    history: reach,
  };
}

async function hasCommit(git: GitCommand, commit: string): Promise<boolean> {
  return git.raw(['cat-file', '-e', '--end-of-options', `${commit}^{commit}`]).then(
    () => true,
    () => false,
  );
}

async function isAncestor(git: GitCommand, ancestor: string, commit: string): Promise<boolean> {
  return git.raw(['merge-base', '--is-ancestor', '--end-of-options', ancestor, commit]).then(
    () => true,
    () => false,
  );
}

/** The first-parent commits of a rev-list range, newest first. */
async function firstParents(git: GitCommand, range: readonly string[]): Promise<string[]> {
  return (await git.raw(['rev-list', '--first-parent', ...range, '--']))
    .split('\n')
    .map(s => s.trim())
    .filter(Boolean);
}

/** Author and subject of each commit, for the summary (as git has them: declared, like every commit's author). */
async function describeCommits(git: GitCommand, commits: readonly string[]): Promise<Map<string, { author: string; subject: string }>> {
  const out = new Map<string, { author: string; subject: string }>();
  for (let i = 0; i < commits.length; i += 200) {
    const text = await git.raw([
      'show',
      '-s',
      '--no-walk=unsorted',
      '--format=%H%x00%ae%x00%s',
      '--end-of-options',
      ...commits.slice(i, i + 200),
    ]);
    for (const line of text.split('\n')) {
      const [commit, author, subject] = line.split('\0');
      if (commit && author !== undefined) out.set(commit, { author, subject: subject ?? '' });
    }
  }
  return out;
}
