import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A fresh private folder under the system temp folder, with symbolic links resolved (the file driver
 * refuses a storage root with a link in it or above it, as macOS's /tmp is).
 */
export function makeTempDir(label = 'lockstep-test'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`)));
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Registers mocha hooks that hand each test (or the whole suite, with `scope: 'suite'`) a fresh
 * temporary folder and remove it afterwards. Read `.path` inside tests and hooks only.
 */
export function useTempDir(label = 'lockstep-test', scope: 'test' | 'suite' = 'test'): { readonly path: string } {
  let current: string | undefined;
  const holder = {
    get path(): string {
      if (current === undefined) throw new Error('useTempDir: the folder exists only inside tests and hooks');
      return current;
    },
  };
  const setUp = () => {
    current = makeTempDir(label);
  };
  const tearDown = () => {
    if (current !== undefined) removeTempDir(current);
    current = undefined;
  };
  if (scope === 'suite') {
    before(setUp);
    after(tearDown);
  } else {
    beforeEach(setUp);
    afterEach(tearDown);
  }
  return holder;
}

/** Every file and folder below `root` (not `root` itself), as absolute paths. */
export function walk(root: string): { files: string[]; dirs: string[] } {
  const files: string[] = [];
  const dirs: string[] = [];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        dirs.push(full);
        visit(full);
      } else files.push(full);
    }
  };
  visit(root);
  return { files, dirs };
}
