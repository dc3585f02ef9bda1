import type { ContainerFile } from '../container/containerFile';
import { LockConfigurationError } from '../errors';
import type { GitCommand } from '../git/runner';
import { isLive, type LockRecord } from '../lockRecord';
import type { MergeVerdict } from './verdict';

/**
 * `lockstep verify --merge BASE HEAD --actor LOGIN` (a pull or merge request): the request's author,
 * mapped to an identity by `pushers` in `.lockstep.json` (as committed on BASE), holds the live
 * grant now, and HEAD is based on BASE's current tip (so merging it lands exactly the holder's work
 * on top of the branch). A request into a branch that is not protected passes.
 */
export interface MergeRequest {
  readonly branch: string;
  /** BASE's tip as the remote answers now. */
  readonly tip: string;
  readonly head: string;
  readonly actor: string;
}

export async function verifyMerge(
  git: GitCommand,
  file: ContainerFile,
  request: MergeRequest,
  page: () => Promise<LockRecord>,
  now: number,
): Promise<MergeVerdict> {
  const base = { kind: 'merge' as const, branch: request.branch, head: request.head, actor: request.actor };
  if (!file.protectedBranches.includes(request.branch)) {
    return {
      ...base,
      identity: null,
      outcome: 'passed',
      reasons: [`${request.branch} is not a protected branch of the container: nothing to verify.`],
    };
  }
  const present = await git.raw(['cat-file', '-e', '--end-of-options', `${request.head}^{commit}`]).then(
    () => true,
    () => false,
  );
  if (!present) {
    throw new LockConfigurationError(
      `The request's head ${request.head.slice(0, 12)} is not in this clone: check out the request's head with full history (fetch-depth: 0) before the check.`,
      { setting: 'merge' },
    );
  }
  const identity = Object.hasOwn(file.pushers ?? {}, request.actor) ? file.pushers![request.actor] : null;
  const reasons: string[] = [];
  if (identity === null) {
    reasons.push(
      `${request.actor} has no Lockstep identity: .lockstep.json's pushers (on ${request.branch}) does not list this login, so no grant can be theirs. An operator adds "${request.actor}": "<identity>" to pushers.`,
    );
  }
  const record = await page();
  const h = record.holder;
  if (identity !== null) {
    if (h === null || !isLive(h, now))
      reasons.push(
        `No one holds the live grant now (the last grant is #${record.grant}); ${identity} must acquire the lock before the request can land.`,
      );
    else if (h.identity !== identity)
      reasons.push(`The live grant #${h.grant} is held by ${h.identity}, not by ${identity} (${request.actor}).`);
  }
  const based = await git.raw(['merge-base', '--is-ancestor', '--end-of-options', request.tip, request.head]).then(
    () => true,
    () => false,
  );
  if (!based)
    reasons.push(
      `The request's head ${request.head.slice(0, 12)} is not based on ${request.branch}'s tip ${request.tip.slice(0, 12)}: merge or rebase onto it, then run the check again.`,
    );
  if (reasons.length > 0) return { ...base, identity, outcome: 'failed', reasons };
  return {
    ...base,
    identity,
    outcome: 'passed',
    reasons: [
      `${request.actor} is ${identity}, who holds the live grant #${h!.grant}, and the request is based on ${request.branch}'s tip ${request.tip.slice(0, 12)}.`,
    ],
  };
}
