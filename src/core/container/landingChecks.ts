import { LockRefusedError } from '../errors';
import * as protocol from '../lockRecord';
import type { Landing, LockRecord } from '../lockRecord';
import { landedUnderGrant, landingState, type Clone } from './clone';
import type { ContainerFile } from './containerFile';
import type { Session } from './session';

/**
 * What a release and a landing announcement ask of the clone's git (through `clone.ts`): whether the
 * work is on the shared remote's protected branch, which commit landed under the grant, and whether a
 * landing is already announced on the page.
 */

/** The branch a landing is judged on: the first protected branch. */
function landingBranch(file: ContainerFile): string {
  return file.protectedBranches[0] ?? 'main';
}

/**
 * What stops a release: uncommitted tracked changes or commits the remote lacks (throws 'not-landed').
 * Returns the commit that landed under the session's grant: HEAD, when it is on the remote's branch,
 * was not there when the grant began, and was committed by this person or during the grant; undefined
 * when nothing of this grant landed (docs/protocol.md#landings-and-caution).
 */
export async function checkLanded(
  clone: Clone,
  file: ContainerFile,
  identity: string,
  session: Session | undefined,
  options: { fetch?: boolean } = {},
): Promise<string | undefined> {
  const branch = landingBranch(file);
  const landing = await landingState(clone, file.remote, branch, options);
  const problems: string[] = [];
  if (landing.dirtyCount > 0) {
    const more = landing.dirtyCount > landing.dirty.length ? ` and ${landing.dirtyCount - landing.dirty.length} more` : '';
    problems.push(`uncommitted changes to ${landing.dirty.join(', ')}${more}`);
  }
  if (landing.unpushed > 0) problems.push(`${landing.unpushed} commit${landing.unpushed === 1 ? '' : 's'} not on ${file.remote}/${branch}`);
  if (problems.length > 0) {
    throw new LockRefusedError(
      'not-landed',
      `Release is valid only after a push: you have ${problems.join(' and ')}. Commit and push to ${file.remote}/${branch}, then release (or: lockstep release --push).`,
    );
  }
  if (!landing.head || !landing.onRemote || !session) return undefined;
  const ours = await landedUnderGrant(clone, landing.head, session.base, identity);
  return ours ? landing.head.slice(0, 12) : undefined;
}

/**
 * Whether this clone's work is not all on the remote's protected branch, as far as the last fetch
 * knows (no fetch: status stays read-only); undefined when that cannot be told.
 */
export async function hasUnpushedWork(clone: Clone, file: ContainerFile): Promise<boolean | undefined> {
  try {
    const landing = await landingState(clone, file.remote, landingBranch(file), { fetch: false });
    return landing.unpushed > 0 || landing.dirtyCount > 0;
  } catch {
    return undefined;
  }
}

/** Whether the page already announces that `grant` lands `landing.to` on `landing.branch` (announced once per grant and commit). */
export function landingAnnounced(record: LockRecord, grant: number, landing: Landing): boolean {
  return record.audit.some(l => {
    if (l.action !== 'land' || l.outcome !== 'done' || l.grant !== grant) return false;
    const detail = protocol.parseLandingDetail(l.detail);
    return detail?.to === landing.to && detail?.branch === landing.branch;
  });
}
