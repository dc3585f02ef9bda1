import * as fs from 'node:fs';
import * as path from 'node:path';
import { sessionDir } from './session';

/** Writes past the bound that a clone lets go by after its compaction was refused, before it tries again. */
export const COMPACTION_RETRY_WRITES = 100;

const FILE = 'compaction-backoff';

/**
 * A clone's memory that the remote refused its automatic compaction (an older server guard refuses a
 * snapshot that keeps only the newest audit entries; a host may refuse non-fast-forward lock refs): the
 * next {@link COMPACTION_RETRY_WRITES} writes past the bound do not try again, and the refusal is told
 * once, not at every retry. One small file in the clone's `.git/lockstep/`; best effort (a file that
 * cannot be read or written only means trying sooner). A compaction whose outcome is unknown (a
 * timeout, a kill) leaves no mark: the next write's depth check finds the history long and tries again.
 */
export class CompactionBackoff {
  private readonly file: string;

  constructor(gitDir: string) {
    this.file = path.join(sessionDir(gitDir), FILE);
  }

  /** Counts one write past the bound; true while the clone is backing off (no compaction now). */
  skip(): boolean {
    const left = this.left();
    if (left === undefined || left <= 0) return false;
    this.write(left - 1);
    return true;
  }

  /** The remote refused a compaction: back off. True when this is news (no refusal was remembered): tell it. */
  refused(): boolean {
    const news = this.left() === undefined;
    this.write(COMPACTION_RETRY_WRITES);
    return news;
  }

  /** A compaction landed: forget any refusal. */
  clear(): void {
    fs.rmSync(this.file, { force: true });
  }

  private left(): number | undefined {
    try {
      const n = Number(fs.readFileSync(this.file, 'utf8').trim());
      return Number.isSafeInteger(n) ? n : 0;
    } catch {
      return undefined;
    }
  }

  private write(left: number): void {
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(this.file, `${left}\n`);
    } catch {
      // Best effort: without the mark the next write past the bound tries again.
    }
  }
}
