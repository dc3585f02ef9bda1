import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../../atomicReplace';
import { LockTamperedPageError } from '../../errors';
import { type OpenpgpListing, type OpenpgpListingText, readOpenpgpListing, stepSignature } from '../../chain/openpgpSigners';
import { checkSignedSnapshot, checkSignedStep, type StepSignature } from '../../chain/signedStep';
import type { ContainerSettings, LockRecord } from '../../lockRecord';
import { parseRecord } from '../../recordCodec';
import { withSignersFile } from './signersFile';
import { AUDIT_FILE, MAX_RECORD_BYTES, RECORD_FILE, type GitRefs, type SignedCommit } from './gitRefs';
import { AUDIT_LOG_KEEP } from './auditHistory';

/**
 * The proof of a signed lock page on the git driver (`allowedSigners` in `.lockstep.json`): before
 * a clone believes the record at the ref's tip, every step since the page's creation — or since the
 * last step this clone verified, cached in a checkpoint file under `.git/lockstep/` — must be signed
 * by a key the allowed signers list gives its audit line's identity and be one legal transition of
 * the record before it (signedStep.ts). Anything else is a tampered page (LockTamperedPageError),
 * naming the first step that is not proven:
 *
 * - a step unsigned, signed by an unlisted key or another identity's key, or with a signature
 *   copied from another commit (git verifies the signature over the commit's own bytes);
 * - a step that is no legal transition (a forged holder, a skipped grant);
 * - a tip this clone verified a later step than (a rewind), or a history that forks below the
 *   checkpoint (a rewind rewritten);
 * - a new history (a parentless commit) that is not an operator's signed `adopt` dated after the
 *   checkpoint, nor a compaction of what was verified (one that keeps the verified step among its
 *   entries or, keeping as many as it may, only entries no older than that step).
 *
 * The cost is the new steps only: one `git log` (git runs ssh-keygen per new commit) and one
 * `cat-file --batch` of their records. A clone with no checkpoint (a fresh clone) verifies from the
 * page's creation, or from its last compaction, whose snapshot it accepts when signed by the
 * record's last actor or an operator. A fresh clone cannot tell a rewind to an older proven step from
 * that step itself: rewinds are caught by clones that saw the later step.
 */

export interface SigningPolicy {
  readonly container: string;
  readonly settings: ContainerSettings;
  /** The allowed signers file's text, as the protected branch has it. */
  readonly allowedSigners: () => Promise<string>;
  /**
   * The OpenPGP listing (`openpgpSigners`, `openpgpKeys`) as the protected branch has it, when the
   * container names one (docs/protocol.md "OpenPGP (GPG) signatures": git commits and signed chains alike).
   */
  readonly openpgp?: () => Promise<OpenpgpListingText>;
  /** Where this clone keeps the last step it verified (a file it may write). */
  readonly checkpointFile: string;
}

export async function verifyHistory(refs: GitRefs, tip: string, policy: SigningPolicy): Promise<void> {
  const checkpoint = readCheckpoint(policy.checkpointFile);
  if (checkpoint?.revision === tip) return;
  const listed = await openpgpListing(policy);
  const commits = await withSignersFile(
    await policy.allowedSigners(),
    (file, env) => refs.signedLog(tip, checkpoint?.revision, file, env),
    listed?.keyring,
  );
  const tampered = (revision: string, why: string) => new LockTamperedPageError('git', revision, why);
  if (commits.length === 0) {
    // The tip is below what this clone verified: the ref was set back.
    throw tampered(tip, 'the ref was set back to an older step than one this clone has already verified (a rewind).');
  }
  const oldest = commits[commits.length - 1];
  const continues = checkpoint !== undefined && oldest.parents.length === 1 && oldest.parents[0] === checkpoint.revision;
  if (!continues && oldest.parents.length !== 0) {
    throw tampered(
      oldest.revision,
      checkpoint === undefined
        ? "its history does not start with the page's creation."
        : 'it builds on an older step than one this clone has already verified (the history was rewound and rewritten).',
    );
  }
  const chain = commits.slice().reverse();
  const texts = await refs.readFiles([...(continues ? [checkpoint.revision] : []), ...chain.map(c => c.revision)], RECORD_FILE);
  const record = (revision: string, text: Buffer | null): { value: LockRecord; text: string } => {
    if (text === null || text.length > MAX_RECORD_BYTES) throw tampered(revision, `its commit holds no ${RECORD_FILE} a reader reads.`);
    try {
      return {
        value: parseRecord(JSON.parse(text.toString('utf8')), 'git', policy.container, policy.settings),
        text: text.toString('utf8'),
      };
    } catch (cause) {
      throw new LockTamperedPageError('git', revision, `its ${RECORD_FILE} is not a valid lock record of this container.`, { cause });
    }
  };
  let before: LockRecord | null = continues ? record(checkpoint.revision, texts[0]).value : null;
  let last = '';
  const offset = continues ? 1 : 0;
  for (const [i, commit] of chain.entries()) {
    const after = record(commit.revision, texts[i + offset]);
    const signature: StepSignature = stepSignature(commit, listed?.signers);
    let why: string | undefined;
    if (i === 0 && !continues) why = await checkStart(refs, commit, after, signature, policy, checkpoint);
    else why = checkSignedStep(before, after.value, after.text, signature, policy.settings);
    if (why !== undefined) throw tampered(commit.revision, why);
    before = after.value;
    last = after.text;
  }
  writeCheckpoint(policy.checkpointFile, { revision: tip, at: lastLineTime(last), digest: digestOf(last) });
}

/** The policy's OpenPGP listing, parsed, and what the reader's keyring imports from it. */
async function openpgpListing(policy: Pick<SigningPolicy, 'openpgp'>): Promise<OpenpgpListing | undefined> {
  return policy.openpgp === undefined ? undefined : readOpenpgpListing(await policy.openpgp());
}

/** A history's first commit: the page's creation, an operator's adopt over a damaged page, or a compaction's snapshot. */
async function checkStart(
  refs: GitRefs,
  commit: SignedCommit,
  after: { value: LockRecord; text: string },
  signature: StepSignature,
  policy: SigningPolicy,
  checkpoint: Checkpoint | undefined,
): Promise<string | undefined> {
  if (commit.snapshot) {
    const why = checkSignedSnapshot(after.value, signature, policy.settings);
    if (why !== undefined || checkpoint === undefined) return why;
    // A compaction of what this clone verified keeps that step among the revisions of its audit.log, and
    // when it compacted exactly that step, its record byte for byte.
    const log = await refs.readFile(commit.revision, AUDIT_FILE);
    if (log === null || (!log.includes(`"revision":"${checkpoint.revision}"`) && !leftBehind(log, await verifiedStep(refs, checkpoint)))) {
      return 'it replaces the history with a snapshot that does not hold the step this clone verified last.';
    }
    const lastRevision = /"revision":"([0-9a-f]{40,64})"[^\n]*\n?$/.exec(log)?.[1];
    if (lastRevision === checkpoint.revision) {
      const { digest } = await verifiedStep(refs, checkpoint);
      if (digest !== digestOf(after.text)) return 'it is a compaction that changes the record it compacts.';
    }
    return undefined;
  }
  const line = after.value.audit[after.value.audit.length - 1];
  if (checkpoint !== undefined) {
    // A new history over a verified one: only an operator's adopt, written after what was verified.
    if (line?.action !== 'adopt')
      return "it replaces the page's history with a new one, which only an operator's signed lockstep adopt may.";
    const { at: verifiedAt } = await verifiedStep(refs, checkpoint);
    if (verifiedAt !== undefined && line.at <= verifiedAt) return 'it is an adopt older than the step this clone verified last (a replay).';
  }
  return checkSignedStep(null, after.value, after.text, signature, policy.settings);
}

/**
 * Whether the step this clone verified last is older than everything a full snapshot keeps: its audit.log
 * holds AUDIT_LOG_KEEP entries (so older ones were left out) and the oldest is no older than that step
 * (dated by its record's last line). A snapshot that rewinds past the step keeps older entries, and one
 * that is not full has left nothing out.
 */
function leftBehind(log: string, verified: VerifiedStep): boolean {
  const lines = log.split('\n').filter(l => l !== '');
  if (lines.length < AUDIT_LOG_KEEP) return false;
  let oldest: unknown;
  try {
    oldest = (JSON.parse(lines[0]) as { time?: unknown }).time;
  } catch {
    return false;
  }
  return typeof oldest === 'number' && verified.at !== undefined && verified.at <= oldest;
}

/** What a compaction is judged by: the verified step's last audit time and its record's digest. */
interface VerifiedStep {
  readonly at?: number;
  readonly digest?: string;
}

/**
 * The last step this clone verified. Its time and its record's digest are kept in the checkpoint file,
 * so that a clone away while the team compacted the ref judges the snapshot even after its own git
 * pruned that step's commit (unreachable once compacted: `git gc` removes it two weeks on). A
 * checkpoint an earlier version wrote holds the revision alone, and its commit is read.
 */
interface Checkpoint extends VerifiedStep {
  readonly revision: string;
}

async function verifiedStep(refs: GitRefs, checkpoint: Checkpoint): Promise<VerifiedStep> {
  if (checkpoint.at !== undefined && checkpoint.digest !== undefined) return checkpoint;
  const [known] = await refs.readFiles([checkpoint.revision], RECORD_FILE);
  if (known === null) return {};
  const text = known.toString('utf8');
  return { at: lastLineTime(text), digest: digestOf(text) };
}

function digestOf(recordText: string): string {
  return createHash('sha256').update(recordText).digest('hex');
}

function lastLineTime(text: string): number | undefined {
  try {
    const audit = (JSON.parse(text) as { audit?: { at?: unknown }[] }).audit;
    const at = audit?.[audit.length - 1]?.at;
    return typeof at === 'number' ? at : undefined;
  } catch {
    return undefined;
  }
}

/** `<revision> <time> <digest>`, or an earlier version's `<revision>`; anything else is no checkpoint. */
function readCheckpoint(file: string): Checkpoint | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const parts = /^([0-9a-f]{40}|[0-9a-f]{64})(?: (\d{1,15}) ([0-9a-f]{64}))?\n?$/.exec(text);
  if (parts === null) return undefined;
  return parts[2] === undefined ? { revision: parts[1] } : { revision: parts[1], at: Number(parts[2]), digest: parts[3] };
}

/** Atomically, so that two processes of the clone leave one whole checkpoint. */
function writeCheckpoint(file: string, checkpoint: Checkpoint): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const dated = checkpoint.at !== undefined && checkpoint.digest !== undefined ? ` ${checkpoint.at} ${checkpoint.digest}` : '';
  writeFileAtomically(file, `${checkpoint.revision}${dated}\n`, "The clone's checkpoint of the verified history");
}
