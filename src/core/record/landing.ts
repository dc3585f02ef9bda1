import { done, lapsed, type Outcome, refused } from './outcome';
import type { ContainerSettings, Holder, HolderProof, LockRecord } from './record';
import { holds, lapseOf } from './turns';

/** A full commit id (SHA-1 or SHA-256), as a landing announcement names them. */
export const FULL_COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A protected branch's name as `.lockstep.json` allows it (schemas/lockstep.schema.json). */
const BRANCH_NAME = /^(?!.*(?:\.\.|\/\/|\/\.|\.lock\/|\.lock$|[/.]$))[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/;

/** What a landing announcement names: the branch, its tip before the push (null: a new branch) and the commit pushed. */
export interface Landing {
  readonly branch: string;
  readonly from: string | null;
  readonly to: string;
}

/** The audit line's detail of a landing announcement: `main <from>..<to>` (`new` for a branch that did not exist). */
export function landingDetail(landing: Landing): string {
  return `${landing.branch} ${landing.from ?? 'new'}..${landing.to}`;
}

/** The landing a `land` line's detail names, or undefined when the detail is not one. */
export function parseLandingDetail(detail: string | undefined): Landing | undefined {
  const match = /^(\S+) (new|[0-9a-f]{40}|[0-9a-f]{64})\.\.([0-9a-f]{40}|[0-9a-f]{64})$/.exec(detail ?? '');
  if (!match || !BRANCH_NAME.test(match[1])) return undefined;
  return { branch: match[1], from: match[2] === 'new' ? null : match[2], to: match[3] };
}

/**
 * The live holder announces, before pushing, that `to` is about to land on `branch` on top of `from`
 * (docs/protocol.md#landing-announcements). The announcement changes nothing but the audit trail; it
 * is what `lockstep verify` reads where no server guard runs (a forge's required check). Only the
 * live holder of the current grant may announce; announcing a commit that then never lands is harmless.
 */
export function announceLanding(
  record: LockRecord,
  proof: HolderProof,
  landing: Landing,
  now: number,
  settings?: ContainerSettings,
): Outcome<Landing> {
  if (!holds(record, proof.tokenHash, proof.grant, now)) {
    return lapsed(lapseOf(record, settings, proof.identity, proof.grant, now));
  }
  if (!BRANCH_NAME.test(landing.branch) || (landing.from !== null && !FULL_COMMIT.test(landing.from)) || !FULL_COMMIT.test(landing.to)) {
    return refused({ reason: 'invalid-request', what: 'landing' });
  }
  const h = record.holder as Holder;
  return done(
    record,
    { branch: landing.branch, from: landing.from, to: landing.to },
    { at: now, who: h.identity, action: 'land', grant: h.grant, detail: landingDetail(landing) },
  );
}
