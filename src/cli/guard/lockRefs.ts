import type { SimpleGit } from 'simple-git';
import { ZERO_SHA, type ReceivedRef } from './hookInput';

/**
 * With the git driver the lock itself lives in this repository, under refs/lockstep/. The server
 * guard accepts an update of such a ref only when it is a valid transition: the record's grant
 * (a container record) or counter (a plain lease) never goes down, and a record's history is only
 * ever extended — or replaced by a compaction snapshot that keeps the record byte for byte.
 * Returns why an update is refused, or undefined.
 */
export async function checkLockRefUpdate(git: SimpleGit, update: ReceivedRef): Promise<string | undefined> {
  if (ZERO_SHA.test(update.newSha)) return 'lock refs are never deleted by a push (that would reset the grant).';
  if (ZERO_SHA.test(update.oldSha)) return undefined; // a new lock ref: nothing to compare with
  const before = await monotonicValue(git, update.oldSha);
  const after = await monotonicValue(git, update.newSha);
  if (after === undefined) return 'the new commit holds no valid record.json.';
  if (before !== undefined && after < before) return `the update would lower the grant or counter from ${before} to ${after}.`;
  if (update.ref.includes('/records/')) {
    const extends_ = await git.raw(['merge-base', '--is-ancestor', update.oldSha, update.newSha]).then(() => true, () => false);
    if (!extends_) {
      const [oldBlob, newBlob] = await Promise.all([blobOf(git, update.oldSha, 'record.json'), blobOf(git, update.newSha, 'record.json')]);
      const snapshot = await blobOf(git, update.newSha, 'audit.log');
      if (!(snapshot && oldBlob && oldBlob === newBlob)) return 'the update rewrites the record\'s history (only a compaction that keeps the record unchanged may).';
    }
  }
  return undefined;
}

/** The record's grant, or a lease's counter. */
async function monotonicValue(git: SimpleGit, sha: string): Promise<number | undefined> {
  const text = await git.raw(['cat-file', 'blob', `${sha}:record.json`]).catch(() => '');
  try {
    const value = JSON.parse(text) as { grant?: unknown; counter?: unknown };
    const n = typeof value.grant === 'number' ? value.grant : value.counter;
    return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

async function blobOf(git: SimpleGit, sha: string, file: string): Promise<string | undefined> {
  const out = await git.raw(['rev-parse', '--verify', '--quiet', `${sha}:${file}`]).catch(() => '');
  return out.trim() || undefined;
}
