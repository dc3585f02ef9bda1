import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CONTAINER_FILE, MAX_CONTAINER_FILE_BYTES } from '../../src/core/container/containerFile';
import { gitIn } from '../../src/core/git/runner';
import { pinnedDriftWarning } from '../../src/core/guard/pinnedDrift';
import { newServerSettings, type ServerSettings } from '../../src/core/guard/serverSettings';
import { makeTempDir, removeTempDir } from '../helpers/tempDir';

/**
 * The server guard's warning that its pinned settings went stale (pinnedDrift.ts), read from a real
 * bare repository as the guard reads it: what the pinned branch's `.lockstep.json` is now — the same,
 * changed, gone, not a regular file, too large or unreadable. The whole story through the CLI and a
 * push: test/integration/settingsSchema.test.ts.
 */

const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const PINNED_AT = 'a'.repeat(40);
const AGAIN = 'it decides with the pinned ones until an administrator runs lockstep hooks install --server in the shared repository again.';
const text = (extra: object = {}) => JSON.stringify({ container: CONTAINER, protectedBranches: ['main'], operators: ['a@x'], ...extra });

describe('the server guard: stale pinned settings, read from a bare repository (real git)', function () {
  this.timeout(60_000);
  let repo: string;
  let settings: ServerSettings;
  const git = (args: string[], input?: string | Buffer) =>
    execFileSync('git', args, { cwd: repo, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim();
  /** Points main at a commit whose tree holds one entry named .lockstep.json (the blob's text, with this mode). */
  const commitMain = (entry: { mode: string; content: string | Buffer; type?: 'blob' | 'tree' } | undefined) => {
    let tree = git(['mktree'], '');
    if (entry !== undefined) {
      const type = entry.type ?? 'blob';
      const id = type === 'blob' ? git(['hash-object', '-w', '--stdin'], entry.content) : git(['mktree'], '');
      tree = git(['mktree', '--missing'], `${entry.mode} ${type} ${id}\t${CONTAINER_FILE}\n`);
    }
    const commit = git(['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit-tree', tree, '-m', 'settings']);
    git(['update-ref', 'refs/heads/main', commit]);
  };
  const warning = () => pinnedDriftWarning(gitIn(repo), settings);

  before(() => {
    repo = makeTempDir('lockstep-drift');
    execFileSync('git', ['init', '--bare', '--quiet', repo]);
    settings = newServerSettings(text(), { branch: 'main', commit: PINNED_AT });
  });
  after(() => removeTempDir(repo));

  it('none while the committed settings agree (an executable file too)', async () => {
    commitMain({ mode: '100644', content: text() });
    assert.equal(await warning(), undefined);
    commitMain({ mode: '100755', content: text() });
    assert.equal(await warning(), undefined);
  });

  it('names the settings that changed, never their values', async () => {
    commitMain({ mode: '100644', content: text({ protectedBranches: ['main', 'release'], operators: ['b@x'] }) });
    assert.equal(
      await warning(),
      `The server guard's pinned settings are stale: .lockstep.json on main differs from them in protectedBranches, operators; ${AGAIN}`,
    );
  });

  it('when the branch has no settings file now, or no branch at all', async () => {
    const gone = `main has no .lockstep.json now (the server guard pinned it at aaaaaaaaaaaa); ${AGAIN}`;
    commitMain(undefined);
    assert.equal(await warning(), gone);
    git(['update-ref', '-d', 'refs/heads/main']);
    assert.equal(await warning(), gone);
  });

  it('when the file is no regular file, is too large, or cannot be read as settings', async () => {
    const unreadable = (why: string) =>
      `The server guard's pinned settings may be stale: .lockstep.json on main cannot be read as settings (${why}); ${AGAIN}`;
    commitMain({ mode: '120000', content: 'elsewhere.json' });
    assert.equal(await warning(), unreadable('.lockstep.json is not a regular file'));
    commitMain({ mode: '040000', content: '', type: 'tree' });
    assert.equal(await warning(), unreadable('.lockstep.json is not a regular file'));
    const padded = (size: number) => text() + ' '.repeat(size - text().length);
    commitMain({ mode: '100644', content: padded(MAX_CONTAINER_FILE_BYTES) });
    assert.equal(await warning(), undefined, 'exactly the largest size is read');
    commitMain({ mode: '100644', content: padded(MAX_CONTAINER_FILE_BYTES + 1) });
    assert.equal(await warning(), unreadable('.lockstep.json is too large'));
    commitMain({ mode: '100644', content: '{' });
    assert.match((await warning()) ?? '', /^The server guard's pinned settings may be stale: .*\(\.lockstep\.json.*JSON.*\); it decides/);
  });
});
