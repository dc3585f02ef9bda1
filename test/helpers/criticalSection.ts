import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The proof of exclusivity the contention workers run while holding a lease, in the folder `shared`:
 *  - `inside.lock` is created with O_CREAT|O_EXCL ('wx'); EEXIST means another process is inside
 *    too (a violation);
 *  - `counter` is read, incremented after `holdTurns` turns of the event loop and rewritten
 *    non-atomically; its value is the global acquisition order (`seq`), so an overlap shows up as a
 *    lost update or a repeated seq.
 */
export async function insideCriticalSection(shared: string, holdTurns: number): Promise<{ seq: number; violation: boolean }> {
  const insideMarker = path.join(shared, 'inside.lock');
  const counterFile = path.join(shared, 'counter');
  let marked = false;
  let violation = false;
  try {
    try {
      fs.closeSync(fs.openSync(insideMarker, 'wx'));
      marked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      violation = true;
    }
    const seq = readCounter(counterFile) + 1;
    for (let t = 0; t < holdTurns; t++) await new Promise(resolve => setImmediate(resolve));
    fs.writeFileSync(counterFile, String(seq));
    return { seq, violation };
  } finally {
    if (marked) fs.unlinkSync(insideMarker);
  }
}

function readCounter(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}
