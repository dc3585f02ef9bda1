import type { Clock } from '../clock';
import { LockBusyError, LockRefusedError } from '../errors';
import * as protocol from '../lockRecord';
import type { ContainerSettings, HolderProof, LockRecord } from '../lockRecord';
import { hashProof, hashToken, pushProof } from '../tokens';
import { hasPushProof, removePushProof, writePushProof, type Clone } from './clone';
import type { ContainerFile } from './containerFile';
import {
  clearPending,
  createPending,
  clearReleased,
  clearSession,
  readPending,
  readReleased,
  readSession,
  writePending,
  writeReleased,
  writeSession,
  type Session,
} from './session';

/**
 * The clone's session kept in step with the page (docs/protocol.md#unknown-outcomes): what a read of
 * the page finishes or undoes of an interrupted command, the session an acquire the page confirmed
 * becomes, its push proof, and the proof a holder's transition presents. The files themselves are
 * `session.ts`'s; this decides when each is written and removed.
 */
export class SessionChoreography {
  /** The grant whose unconfirmed release {@link settle} found on the page (the session is gone). */
  finishedRelease: number | undefined;

  constructor(
    private readonly clone: Clone,
    private readonly file: ContainerFile,
    private readonly settings: ContainerSettings,
    private readonly identity: string,
    private readonly clock: Clock,
    /** The lock page the checked-out settings name (errors.ts describePage): a session taken on another is refused. */
    private readonly page: string,
  ) {}

  session(): Session | undefined {
    return readSession(this.clone.gitDir, this.file.container, this.page);
  }

  /** The acquire of this clone whose write was sent and whose outcome is not known yet. */
  pending(): Session | undefined {
    return readPending(this.clone.gitDir, this.file.container, this.page);
  }

  /**
   * Finishes or undoes what an interrupted command of this clone left, judged by the page just read
   * (docs/protocol.md#unknown-outcomes). An acquire whose write was sent but never confirmed left its
   * token in `pending.json`: when the page names that token the acquire is finished (session and push
   * proof written); when the page shows its grant number went to someone else, it is dropped; otherwise
   * (the write may still be on its way) it is kept, and the next acquire reuses its token. A release
   * whose write landed unconfirmed is finished (the session goes). A live session without its push proof
   * gets it back. Costs nothing when there is nothing to settle.
   */
  async settle(record: LockRecord): Promise<void> {
    const gitDir = this.clone.gitDir;
    const pending = this.pending();
    if (pending) {
      const h = record.holder;
      if (h !== null && h.tokenHash === hashToken(pending.token)) await this.promote({ ...pending, grant: h.grant }, pending);
      else if (record.grant >= pending.grant) clearPending(gitDir, pending);
    }
    const session = this.session();
    if (!session) return;
    const tokenHash = hashToken(session.token);
    if (protocol.holds(record, tokenHash, session.grant, this.clock.now())) {
      if (this.file.serverGuard && !hasPushProof(this.clone)) await this.writeProofOf(session);
      return;
    }
    // Only the token's holder can release its grant: a release line for it is this clone's own release.
    if (protocol.releaseRecorded(record, session.grant) !== undefined && record.holder?.tokenHash !== tokenHash) {
      this.end();
      this.finishedRelease = session.grant;
      writeReleased(this.clone.gitDir, this.file.container, session.grant);
    }
  }

  /** The acquire's write is on the page: the clone's session, then its push proof, and only then the pending file goes. */
  async promote(session: Session, pending?: Session): Promise<void> {
    writeSession(this.clone.gitDir, session);
    clearReleased(this.clone.gitDir);
    if (this.file.serverGuard) await this.writeProofOf(session);
    if (pending) clearPending(this.clone.gitDir, pending);
  }

  /**
   * The grant of this clone's release that an earlier read finished (its answer was lost, and the page shows
   * its release line): what `release` run again answers, in a clone with no session since (the caller's check).
   */
  releasedEarlier(record: LockRecord): number | undefined {
    const grant = readReleased(this.clone.gitDir, this.file.container);
    return grant !== undefined && protocol.releaseRecorded(record, grant) !== undefined ? grant : undefined;
  }

  /** The session is over (released, or forgotten on purpose): the session and the push proof go. */
  end(): void {
    clearSession(this.clone.gitDir);
    removePushProof(this.clone);
  }

  /** The push proof of a session's grant, derived from its token (so a lost one can always be written again). */
  private writeProofOf(session: Session): Promise<void> {
    return writePushProof(this.clone, session.grant, pushProof(session.token, this.file.container, session.grant), this.file.remote);
  }

  /**
   * The proof a holder's transition presents. An interrupted acquire, or a live session without its push
   * proof, is settled against the page first (`read` settles); a clone with no session is refused with
   * its next step.
   */
  async holderProof(read: () => Promise<{ record: LockRecord }>): Promise<HolderProof> {
    if (this.pending() || (this.file.serverGuard && this.session() && !hasPushProof(this.clone))) {
      await read();
    }
    const proof = this.sessionProof();
    if (!proof) {
      const { record } = await read();
      const next = protocol.nextStep(record, this.settings, this.identity, this.clock.now());
      throw new LockRefusedError('not-holder', `This clone does not hold the lock (it has no session). To hold it: ${next}.`);
    }
    return proof;
  }

  /** A new acquire of this clone: with the token of an interrupted one when there is one (its write may still land). */
  beginAcquire(token: string, base: Session['base']): PendingAcquire {
    return new PendingAcquire(
      this.clone.gitDir,
      { container: this.file.container, token, identity: this.identity, page: this.page, ...(base ? { base } : {}) },
      this.clock,
    );
  }

  /** The proof of this clone's session, whether or not it is still the live grant. */
  sessionProof(): HolderProof | undefined {
    const session = this.session();
    return session ? { identity: this.identity, tokenHash: hashToken(session.token), grant: session.grant } : undefined;
  }
}

function anotherAcquireInFlight(): LockBusyError {
  return new LockBusyError(
    'Another acquire of this clone is in flight (.git/lockstep/pending.json holds its token), so this one stopped before writing.' +
      ' Wait for it to finish, then run lockstep status; if no lockstep command is running in this clone, lockstep acquire finishes or retries it.',
    0,
  );
}

/**
 * An acquire in flight: its token, identity and base, made once per command. Before each write of the
 * swap leaves, `pending.json` says which grant that write asks for, so that a write whose answer is
 * lost is finished or dropped by the next read (the drop rule compares the page's grant with it).
 */
export class PendingAcquire {
  /** The grant the last write of this command asked for; undefined before its first write. */
  private asked: number | undefined;

  constructor(
    private readonly gitDir: string,
    private readonly attempt: Omit<Session, 'grant' | 'acquiredAt'>,
    private readonly clock: Clock,
  ) {}

  get tokenHash(): string {
    return hashToken(this.attempt.token);
  }

  /** Whether a write of this acquire was sent by this command (its outcome may then be unknown). */
  get sent(): boolean {
    return this.asked !== undefined;
  }

  /** The hash of the push proof the page keeps for `grant` (tokens.ts `pushProof`): the new holder's. */
  proofHash(grant: number): string {
    return hashProof(pushProof(this.attempt.token, this.attempt.container, grant));
  }

  /**
   * Keeps `pending.json` naming the grant the next write asks for, before that write leaves: written
   * when the file does not already say this token and grant, so once for an acquire whose first write
   * is answered, and again only when a lost race (or the page's settling) made the next write ask for
   * another grant.
   */
  ask(grant: number): void {
    let kept = readPending(this.gitDir, this.attempt.container, this.attempt.page);
    if (kept === undefined) {
      if (createPending(this.gitDir, this.session(grant))) {
        this.asked = grant;
        return;
      }
      kept = readPending(this.gitDir, this.attempt.container, this.attempt.page);
    }
    // Another acquire of this clone, begun since this one read the page, wrote its token first: this one
    // stops before its write leaves, so the file keeps the token a landed write would need.
    if (kept?.token !== this.attempt.token) throw anotherAcquireInFlight();
    if (kept.grant !== grant) writePending(this.gitDir, this.session(grant));
    this.asked = grant;
  }

  /** The session this acquire becomes once the page confirms `grant` (the swap's answer). */
  session(grant: number): Session {
    return { ...this.attempt, grant, acquiredAt: this.clock.now() };
  }

  /** Every write of this command was answered with a refusal: none is in flight, and the pending file it wrote goes. */
  drop(): void {
    if (this.asked !== undefined) clearPending(this.gitDir, { token: this.attempt.token, grant: this.asked });
  }
}
