/**
 * Unknown outcomes under chaos (issue 23): the two checks of a container chaos run that look at the clones' own
 * files, as pure functions of what the harness read. Tokens come in as their hashes (hashToken) and go out as
 * grant numbers only: nothing here ever prints a token.
 */
import type { AuditLine } from '../src/core/lockRecord';

/** What the page said that these checks use. */
export interface PageView {
  readonly grant: number;
  readonly holder: { readonly grant: number; readonly tokenHash: string; readonly expiresAt: number } | null;
  readonly audit: readonly Pick<AuditLine, 'action' | 'grant' | 'outcome'>[];
}

/** A token file of a clone (`session.json` or `pending.json`), its token hashed. */
export interface TokenFileView {
  readonly grant: number;
  readonly tokenHash: string;
}

/**
 * A stranded grant: a live holder whose token no clone holds, which nobody can push, heartbeat or release under
 * until it expires. Judged from a read of the page (`before`), then every clone's `pending.json` and then its
 * `session.json` (`held`: the hashes of all their tokens), then a second read of the page (`after`). Returns the
 * grant when the holder was live at `now` (taken before the files were read), is still the very same holder on the
 * second read (same grant and token hash) and still live at `nowAfter` (taken after it), and was in no file;
 * undefined otherwise.
 *
 * Why that is sound: an acquire writes its token to `pending.json` before its compare-and-swap, and the pending file
 * goes only after `session.json` was written (a promotion), or once the page's grant reached the pending grant under
 * someone else; a session goes only after its release is on the page. Reading each clone's pending file before its
 * session file, a holder's token is in one of them unless the page moved on meanwhile, which the second read sees.
 */
export function strandedGrant(
  before: PageView['holder'],
  now: number,
  held: ReadonlySet<string>,
  after: PageView['holder'],
  nowAfter = now,
): number | undefined {
  if (before === null || before.expiresAt <= now) return undefined;
  if (after === null || after.grant !== before.grant || after.tokenHash !== before.tokenHash) return undefined;
  // Still live after the second read: a session may go on purpose (`lockstep forget`) once its lease lapsed.
  if (after.expiresAt <= nowAfter) return undefined;
  return held.has(before.tokenHash) ? undefined : before.grant;
}

/**
 * After a clone's acquire, heartbeat or release was killed, the clone's next command that read the page (exit 0, 1
 * or 3) must have finished or discarded what the kill left (docs/protocol.md#unknown-outcomes). `before` is a read of
 * the page taken before that command began, `pending` and `session` the clone's files after it ended, and `after` a
 * read of the page after it ended (only needed for a session: see below). Returns what was left unsettled, or
 * undefined.
 *
 * - A `pending.json` whose grant the page had already reached before the command: the command's read saw that
 *   grant too (grants only grow), so it must have promoted the token (the page named it) or dropped it (someone
 *   else's). A pending file of a later grant is legitimately kept (the write may still arrive) or is the command's
 *   own new attempt.
 * - A `session.json` whose release the page showed done before the command (and still shows after it: the page's
 *   audit is bounded, and a line that left it cannot be asked for) under a holder that is not its token: a release
 *   whose answer was lost, which the command's read must have finished (the session removed).
 */
export function unsettledAfterKill(run: {
  before: PageView;
  after?: PageView;
  pending?: TokenFileView;
  session?: TokenFileView;
}): string | undefined {
  const { before, pending, session } = run;
  if (pending && pending.grant <= before.grant) {
    return `pending.json of grant #${pending.grant} was kept though the page had reached grant #${before.grant} before the command began`;
  }
  if (session && session.tokenHash !== before.holder?.tokenHash) {
    const released = (page: PageView) => page.audit.some(l => l.action === 'release' && l.outcome === 'done' && l.grant === session.grant);
    if (released(before) && run.after !== undefined && released(run.after) && run.after.holder?.tokenHash !== session.tokenHash) {
      return `session.json of grant #${session.grant} was kept though the page showed its release before the command began`;
    }
  }
  return undefined;
}

/** Whether `unsettledAfterKill` needs a read of the page after the command to judge (a released session). */
export function needsAfterRead(before: PageView, session: TokenFileView | undefined): boolean {
  return (
    session !== undefined &&
    session.tokenHash !== before.holder?.tokenHash &&
    before.audit.some(l => l.action === 'release' && l.outcome === 'done' && l.grant === session.grant)
  );
}
