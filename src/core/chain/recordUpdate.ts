import { SECOND } from '../clock';
import * as protocol from '../lockRecord';
import {
  MAX_LEASE_TTL_MS,
  MIN_LEASE_TTL_MS,
  type AuditLine,
  type ContainerSettings,
  type HolderProof,
  type LockRecord,
  type Outcome,
} from '../lockRecord';
import { encodeRecord } from '../recordCodec';
import { digestsEqual, hashProof } from '../tokens';

/**
 * The server's check of one update of the git driver's lock record: is `after` exactly one legal
 * transition of `before`? The check infers the request from the line the transition appended to
 * the audit trail, applies the same pure function a client would have applied (lockRecord.ts) at
 * the time that line names, and accepts only when the stored bytes are exactly what the client's
 * codec writes for the result (no padding, no reordering, nothing added). So a record can move
 * only the way the protocol moves it: grants advance by exactly one and only on acquire, a holder
 * changes only by acquire, release or clear, and nothing else is written.
 *
 * Server time decides liveness: a transition the protocol performs (outcome `done`) must also be
 * legal at the server's clock. The line's time, within the skew, only sets the timestamps written;
 * it can never end a lease, pass a window or silence a holder before the server's clock says so
 * (a line dated ahead), nor keep a lease alive that has ended by it (a line dated behind).
 *
 * Operations that only the holder may do (heartbeat, release, leasing identifiers, assigning, the
 * lead's own identifiers) must also carry the holder's push proof when proofs are required: the
 * record keeps only the proof's hash, so no one else can produce it.
 */

export interface RecordUpdateContext {
  /** The pinned container settings (windows, operators, lease length). */
  readonly settings: ContainerSettings;
  /** The server's clock. */
  readonly now: number;
  /** How far the time a client wrote may differ from the server's clock. */
  readonly skewMs: number;
  /** Whether holder-only transitions must prove the holder's grant. */
  readonly requireProof: boolean;
  /** The push options the update came with. */
  readonly pushed: { readonly grant?: number; readonly proof?: string };
  /** Who pushes, when the server authenticates the pusher and maps them to an identity. */
  readonly pusher?: string;
  /** The stored bytes of `after` (the guard passes what was pushed); default: `after`'s own encoding. */
  readonly afterText?: string;
}

/** The default tolerance between a client's clock and the server's. */
export const DEFAULT_SKEW_MS = 2 * 60 * SECOND;

/**
 * Why the update is refused (one sentence, no secrets), or undefined when it is a legal transition.
 * `before` is null when the record does not exist yet: then only the page's creation is legal
 * (`lockstep init`, or an operator's `lockstep adopt`).
 */
export function checkRecordUpdate(before: LockRecord | null, after: LockRecord, context: RecordUpdateContext): string | undefined {
  const line = after.audit[after.audit.length - 1];
  if (line === undefined) return 'the new record has no audit line, so it is not a transition of the lock record.';
  if (Math.abs(line.at - context.now) > context.skewMs) {
    return `the transition is dated ${Math.round((line.at - context.now) / SECOND)} s from the server's clock, more than the ${Math.round(context.skewMs / SECOND)} s allowed; check the clock of the machine that wrote it.`;
  }
  if (context.pusher !== undefined && line.who !== context.pusher) {
    return `the transition is made in the name of ${line.who}, but the server knows the pusher as ${context.pusher}.`;
  }
  const candidates = before === null ? creationCandidates(line, after, context) : candidatesFor(line, before, after, context);
  if (typeof candidates === 'string') return candidates;
  const stored = context.afterText ?? encodeRecord(after);
  for (const candidate of candidates) {
    const outcome = candidate(line.at);
    if (outcome.record === undefined || encodeRecord(outcome.record) !== stored) continue;
    // A refusal's line changes nothing but the audit; a transition must hold by the server's clock too.
    if (outcome.ok && !candidate(context.now).ok) {
      return `the ${line.action} by ${line.who} is dated ${Math.round((line.at - context.now) / SECOND)} s from the server's clock and is not legal by the server's clock: a lease ends, a window passes and a holder goes silent only by the server's clock. Try again when it holds there, or check the clock of the machine that wrote it.`;
    }
    return undefined;
  }
  return `the new record is not what ${line.outcome === 'refused' ? 'a refused ' : ''}${line.action} by ${line.who} at that time would write, byte for byte.`;
}

/** A transition applied at a time: the line's (whose timestamps the record holds) or the server's. */
type Candidate = (at: number) => Outcome<unknown>;

function creationCandidates(line: AuditLine, after: LockRecord, context: RecordUpdateContext): Candidate[] | string {
  if (line.action === 'init') return [at => protocol.createPage(after.container, { identity: line.who }, at)];
  if (line.action === 'adopt') {
    const detail = line.detail ?? '';
    const reason = detail.slice(detail.indexOf(': ') + 2);
    return [
      at =>
        protocol.adoptPage(
          after.container,
          context.settings,
          { identity: line.who, reason, grantFloor: after.grant, nextIdFloor: after.nextId },
          at,
        ),
    ];
  }
  return "a lock page is created only by lockstep init (or an operator's lockstep adopt), never by another transition.";
}

function candidatesFor(line: AuditLine, before: LockRecord, after: LockRecord, context: RecordUpdateContext): Candidate[] | string {
  const { settings } = context;
  const holderProof = (): HolderProof | string => {
    const h = before.holder;
    if (h === null) return 'no one holds the lock, so there is no holder to act.';
    if (line.who !== h.identity) return `a ${line.action} by ${line.who} acts for the holder of grant #${h.grant}, who is ${h.identity}.`;
    if (context.requireProof && !provesHolder(before, context.pushed)) {
      return `a ${line.action} acts for the holder of grant #${h.grant}, and this push does not carry that holder's proof.`;
    }
    return { identity: h.identity, tokenHash: h.tokenHash, grant: h.grant };
  };
  const asHolder = (make: (proof: HolderProof) => Candidate[]): Candidate[] | string => {
    const proof = holderProof();
    return typeof proof === 'string' ? proof : make(proof);
  };

  switch (line.action) {
    case 'acquire': {
      const h = after.holder;
      if (h === null || h.identity !== line.who) return 'an acquire must name the acquirer as the holder.';
      // The grant's lease length is the acquirer's choice within the container's limits; the new holder
      // keeps it (and its expiry must be exactly that long after the acquire: the replay compares).
      if (!(h.ttlMs >= MIN_LEASE_TTL_MS && h.ttlMs <= MAX_LEASE_TTL_MS)) {
        return `an acquire must grant a lease of ${MIN_LEASE_TTL_MS / SECOND} s to ${MAX_LEASE_TTL_MS / SECOND} s.`;
      }
      return [
        at =>
          protocol.acquire(before, settings, { identity: line.who, tokenHash: h.tokenHash, proofHash: h.proofHash, ttlMs: h.ttlMs }, at),
      ];
    }
    case 'heartbeat':
      // A heartbeat extends by the grant's own lease length, kept on the holder since the acquire.
      return asHolder(proof => [at => protocol.heartbeat(before, settings, proof, at)]);
    case 'release':
      return asHolder(proof => {
        // The release names the commit it found landed (`landed abc1234`) or says `nothing landed`; only
        // the first may end a caution mark, so a release that ends one without naming a landing is refused.
        const landed = /(?:^|; )landed ([0-9a-f]{7,64})(?:;|$)/.exec(line.detail ?? '')?.[1];
        return [at => protocol.release(before, proof, at, landed !== undefined ? { landed } : {})];
      });
    case 'land': {
      // A landing announcement: the holder's, with its proof; it adds one audit line and nothing else.
      const landing = protocol.parseLandingDetail(line.detail);
      if (landing === undefined) return 'a landing announcement must name a branch and the commits it lands (`main <from>..<to>`).';
      return asHolder(proof => [at => protocol.announceLanding(before, proof, landing, at)]);
    }
    case 'petition': {
      const petition = after.queue.find(p => p.identity === line.who);
      return [
        at => protocol.petition(before, { identity: line.who, ...(petition?.note !== undefined ? { note: petition.note } : {}) }, at),
      ];
    }
    case 'withdraw':
      return [at => protocol.withdraw(before, { identity: line.who }, at)];
    case 'lease-ids': {
      const added = after.ranges.slice(before.ranges.length);
      if (added.length === 0) return 'a lease of identifiers must add a range.';
      const count = added.reduce((sum, r) => sum + r.end - r.start + 1, 0);
      // A lessee the page has not seen needs the lead's explicit --new-identity: try both.
      return asHolder(proof =>
        [undefined, true].map(
          newIdentity => (at: number) =>
            protocol.leaseIds(before, proof, { to: added[0].to, count, ...(newIdentity ? { newIdentity } : {}) }, at),
        ),
      );
    }
    case 'next-id': {
      // A lessee mints from its own range with no proof; the lead mints from the pool and must prove it.
      const asLessee: Candidate = at => protocol.nextId(before, { identity: line.who }, at);
      if (before.holder === null || before.holder.identity !== line.who || before.nextId === after.nextId) return [asLessee];
      return asHolder(proof => [at => protocol.nextId(before, { identity: line.who, holder: proof }, at)]);
    }
    case 'assign': {
      const block = after.blocks[after.blocks.length - 1];
      if (block === undefined) return 'an assignment must add a block.';
      return asHolder(proof =>
        [undefined, true].map(
          newIdentity => (at: number) =>
            protocol.assign(before, proof, { to: block.to, text: block.text, ...(newIdentity ? { newIdentity } : {}) }, at),
        ),
      );
    }
    case 'done': {
      const closed = before.blocks.find(b => !after.blocks.some(a => a.id === b.id));
      if (closed === undefined) return 'marking a block done must close a block.';
      // The assignee closes its own block with no proof; the lead closes any block and must prove it.
      if (closed.to === line.who) return [at => protocol.markDone(before, { identity: line.who, block: closed.id }, at)];
      return asHolder(proof => [at => protocol.markDone(before, { identity: line.who, block: closed.id, holder: proof }, at)]);
    }
    case 'push':
      // A guard's refusal of a protected push, audited: it adds one (folded) audit line and nothing else.
      if (line.outcome !== 'refused') return 'a push line records only a refused push.';
      return [at => protocol.auditRefusedPush(before, { identity: line.who, grant: line.grant, detail: line.detail ?? '' }, at)];
    case 'init':
    case 'adopt':
      return 'the lock page exists already; it is created once.';
    case 'clear': {
      // A refused attempt's line holds the reason as given; a clear's holds it after `cleared <holder>: `
      // (or `cleared <holder> (reclaimed N unused identifiers): ` when its ranges gave identifiers back).
      const detail = line.detail ?? '';
      const silent = before.holder?.identity;
      const reasons = new Set<string>([detail, '']);
      if (silent !== undefined) {
        const prefix = protocol.clearedPrefix(silent, protocol.unusedIdentifiers(before));
        if (detail.startsWith(prefix)) reasons.add(detail.slice(prefix.length));
      }
      return [...reasons].map(reason => (at: number) => protocol.clear(before, settings, { identity: line.who, reason }, at));
    }
    default:
      return `the audit line's action is not one the protocol knows.`;
  }
}

/** Does the push carry the proof of the current holder's grant? */
export function provesHolder(record: LockRecord, pushed: { readonly grant?: number; readonly proof?: string }): boolean {
  const h = record.holder;
  return (
    h !== null &&
    pushed.grant === h.grant &&
    pushed.proof !== undefined &&
    /^[0-9a-f]{64}$/.test(pushed.proof) &&
    digestsEqual(h.proofHash, hashProof(pushed.proof))
  );
}
