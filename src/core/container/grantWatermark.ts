import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../atomicReplace';
import { LockRewoundPageError } from '../errors';

/**
 * The highest grant this clone has read on its container's page, kept in `.git/lockstep/grant-<key>` (the page's key,
 * as the verified checkpoint of a signed page is named). Grants only go up (seed: never reused or lowered), so a page
 * that reads a lower one was set back — an old copy of the store restored, the lock ref moved back on the remote —
 * and is refused as a rewound page ({@link LockRewoundPageError}, exit 5) instead of read as a free lock whose next
 * acquire would issue a grant a second time. It catches a rewind in every clone that read the page past it; a clone
 * that never did (a fresh clone) cannot tell a set-back page from the page itself.
 *
 * A cache of what the page said, not a secret: a file that cannot be read or holds anything but a whole number counts
 * as none, and one that cannot be written (a read-only clone) leaves the check to the clone's session grant.
 */
export class GrantWatermark {
  private known: number | undefined;

  constructor(private readonly file: string) {}

  /** The highest grant seen so far: the file's, or `floor` (the clone's own session grant) when that is higher. */
  seen(floor = 0): number {
    this.known ??= readMark(this.file);
    return Math.max(this.known, floor);
  }

  /** Refuses a page that reads below what this clone has seen; otherwise keeps its grant as the new mark when higher. */
  check(driver: string, revision: string, grant: number, floor = 0): void {
    const seen = this.seen(floor);
    if (grant < seen) throw new LockRewoundPageError(driver, revision, grant, seen);
    if (grant > (this.known ?? 0)) {
      this.known = grant;
      writeMark(this.file, grant);
    }
  }
}

function readMark(file: string): number {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return /^\d{1,15}$/.test(text) ? Number(text) : 0;
  } catch {
    return 0;
  }
}

/** Atomically (two processes of the clone leave one whole number); a failure only leaves the older mark. */
function writeMark(file: string, grant: number): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileAtomically(file, `${grant}\n`, "The clone's highest grant seen");
  } catch {
    // the older mark stays: a later read raises it again
  }
}
