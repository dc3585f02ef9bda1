import { formatClock } from './format';
import { LockFencedError } from './errors';
import { isLive, nextStep, type ContainerSettings, type LockRecord } from './lockRecord';
import { digestsEqual, hashProof, hashToken } from './tokens';

/**
 * The fence at landing, as pure verdicts: may this push reach a protected branch? The client hook
 * asks with the clone's session; the server's hook asks with the proof the push carried. Both
 * answer with a LockFencedError that says exactly why and what to do, or undefined to let it pass.
 */

function holderLine(record: LockRecord): string {
  const h = record.holder;
  return h ? `, held by ${h.identity} since ${formatClock(h.grantedAt)}` : '';
}

/** Who pushes, for advice that is true for them (without it the advice points at `lockstep status`). */
export interface PushViewer {
  readonly identity: string;
  readonly settings: ContainerSettings;
}

/** Client side (`guard pre-push`): this clone must hold the live lease and the current grant. */
export function fenceClientPush(
  record: LockRecord,
  session: { grant: number; token: string } | undefined,
  now: number,
  viewer?: PushViewer,
): LockFencedError | undefined {
  const h = record.holder;
  const next = (): string => nextStep(record, viewer?.settings, viewer?.identity ?? '', now);
  if (!session) {
    return new LockFencedError(
      `This clone does not hold the lock${h !== null && isLive(h, now) ? `; the current grant #${record.grant} is held by ${h.identity}` : ''}, and pushes to protected branches need it. To hold it: ${next()}.`,
      record.grant,
    );
  }
  if (session.grant < record.grant) {
    return new LockFencedError(
      `Your grant #${session.grant} has ended; the current grant is #${record.grant}${holderLine(record)}. Your commits stay in this clone: to push them, ${next()}; then rebase onto the new work.`,
      record.grant,
      session.grant,
    );
  }
  if (h === null || h.grant !== session.grant || !digestsEqual(h.tokenHash, hashToken(session.token))) {
    return new LockFencedError(
      `Your grant #${session.grant} is no longer held (the lock was released or cleared). To push: ${next()}.`,
      record.grant,
      session.grant,
    );
  }
  if (!isLive(h, now)) {
    return new LockFencedError(
      `Your lease (grant #${session.grant}) expired at ${formatClock(h.expiresAt)}; a lapsed lease cannot push. To push under a new grant: ${next()}.`,
      record.grant,
      session.grant,
    );
  }
  return undefined;
}

/** Server side (`guard pre-receive`): the push must prove the current, live grant. */
export function fenceServerPush(record: LockRecord, pushed: { grant?: number; proof?: string }, now: number): LockFencedError | undefined {
  const h = record.holder;
  if (pushed.grant === undefined || pushed.proof === undefined) {
    return new LockFencedError(
      'This push carries no proof of grant, and this branch is protected by Lockstep: `lockstep status` in your clone says how to get the lock; push again once you hold it.',
      record.grant,
    );
  }
  if (pushed.grant < record.grant) {
    return new LockFencedError(
      `Your grant #${pushed.grant} has ended; the current grant is #${record.grant}${holderLine(record)}. \`lockstep status\` in your clone says your next step.`,
      record.grant,
      pushed.grant,
    );
  }
  if (h === null && pushed.grant === record.grant && record.grant > 0) {
    return new LockFencedError(
      `Grant #${pushed.grant} is no longer held (the lock was released or cleared). \`lockstep status\` in your clone says your next step.`,
      record.grant,
      pushed.grant,
    );
  }
  if (
    h === null ||
    h.grant !== pushed.grant ||
    !/^[0-9a-f]{64}$/.test(pushed.proof) ||
    !digestsEqual(h.proofHash, hashProof(pushed.proof))
  ) {
    return new LockFencedError(
      (h !== null && pushed.grant === record.grant
        ? `The proof presented for grant #${pushed.grant} is not its holder's proof${holderLine(record)}.`
        : `The proof for grant #${pushed.grant} is not valid for the current grant #${record.grant}${holderLine(record)}.`) +
        ' `lockstep status` in your clone says your next step.',
      record.grant,
      pushed.grant,
    );
  }
  if (!isLive(h, now)) {
    return new LockFencedError(
      `Grant #${pushed.grant} expired at ${formatClock(h.expiresAt)}; a lapsed lease cannot land. \`lockstep status\` in your clone says your next step.`,
      record.grant,
      pushed.grant,
    );
  }
  return undefined;
}

/** Reads `lockstep-grant=N` and `lockstep-proof=HEX` from git's GIT_PUSH_OPTION_* variables. */
export function pushOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): { grant?: number; proof?: string } {
  const count = Number(env.GIT_PUSH_OPTION_COUNT ?? '0');
  const out: { grant?: number; proof?: string } = {};
  for (let i = 0; i < (Number.isSafeInteger(count) ? Math.min(count, 100) : 0); i++) {
    const option = env[`GIT_PUSH_OPTION_${i}`] ?? '';
    const grant = /^lockstep-grant=(\d{1,15})$/.exec(option);
    if (grant) out.grant = Number(grant[1]);
    const proof = /^lockstep-proof=([0-9a-f]{64})$/.exec(option);
    if (proof) out.proof = proof[1];
  }
  return out;
}

/** The first sentence of a refusal, for the audit line (no advice, which is for the reader). */
export function refusalGist(message: string): string {
  const end = message.search(/[.;](\s|$)/);
  return (end < 0 ? message : message.slice(0, end)).slice(0, 120);
}
