/**
 * The shape of a pushed commit on the git driver's record ref. Every write is one commit whose
 * parent is the revision it was computed from, holding `record.json` only; the one exception is a
 * compaction: a parentless snapshot holding `record.json` unchanged and `audit.log`, the newest
 * entries of the same history in one file. Anything else — a rewind, an unrelated history, two writes at once — is
 * refused. Pure: what git said about the commit in, a verdict out.
 */

export interface PushedCommit {
  readonly parents: readonly string[];
  /** Names of the files in its tree. */
  readonly files: readonly string[];
  /** It carries the snapshot trailer of a compaction. */
  readonly snapshot: boolean;
}

export type CommitShape =
  | { readonly kind: 'transition' }
  | { readonly kind: 'compaction' }
  | { readonly kind: 'restart' }
  | { readonly kind: 'refuse'; readonly why: string };

/**
 * `restart`: on a signed page (allowedSigners), a parentless commit holding only a record may also
 * replace the history — an operator's signed adopt (signedStep.ts checks the rest).
 */
export function recordCommitShape(
  oldSha: string | null,
  commit: PushedCommit,
  files: { record: string; audit: string },
  options: { readonly restart?: boolean } = {},
): CommitShape {
  const names = [...commit.files].sort();
  const onlyRecord = names.length === 1 && names[0] === files.record;
  if (oldSha === null) {
    return commit.parents.length === 0 && onlyRecord && !commit.snapshot
      ? { kind: 'transition' }
      : { kind: 'refuse', why: 'a new lock record must be one parentless commit holding only its first record.' };
  }
  if (commit.parents.length === 1 && commit.parents[0] === oldSha && onlyRecord && !commit.snapshot) return { kind: 'transition' };
  if (commit.parents.length === 0 && commit.snapshot && names.length === 2 && names[0] === files.audit && names[1] === files.record) {
    return { kind: 'compaction' };
  }
  if (options.restart && commit.parents.length === 0 && onlyRecord && !commit.snapshot) return { kind: 'restart' };
  // serverRepo.ts names an entry that is not a plain file with its mode: say that, not "a rewind" (never its name).
  if (commit.files.some(name => / \(mode \d+\)$/.test(name))) {
    return {
      kind: 'refuse',
      why: 'the commit holds an entry that is not a plain file (a symbolic link, an executable, a submodule or a folder); each write holds record.json as a plain file.',
    };
  }
  return {
    kind: 'refuse',
    why: "the update rewinds, replaces or skips the record's history; each write is one commit on top of the last (or a compaction).",
  };
}

/**
 * A compaction keeps the record byte for byte and the newest entries of the audit history, unchanged and
 * in order: `before.auditLog` is the audit.log those entries make (the newest `kept`, or all of them
 * when fewer: the git driver's AUDIT_LOG_KEEP), and the pushed one must be exactly that — no entry
 * dropped, altered, added or moved.
 */
export function checkCompaction(
  before: { record: string; auditLog: string },
  after: { record: string; auditLog: string },
  kept: number,
): string | undefined {
  if (after.record !== before.record) return 'a compaction must keep the record unchanged.';
  if (after.auditLog !== before.auditLog) {
    return `a compaction must keep the newest ${kept.toLocaleString('en')} entries of the record's audit history (all of them when fewer), unchanged and in order.`;
  }
  return undefined;
}
