import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockBackendError, LockConfigurationError, type PageLocation } from '../errors';
import { resolveConfig } from '../config';
import { gitIn, type GitCommand } from '../git/runner';
import { guardWitnessFile, serverDriverOptions } from '../guard/serverSettings';
import { readServerSettings } from '../hooks/install';
import type { LockRecord } from '../lockRecord';
import { readContainerPage } from '../container/guardPageAccess';
import { withoutCredentials } from '../container/pageLocation';
import { CONTAINER_FILE, driverOptions, parseContainerFile, type ContainerFile } from '../container/containerFile';
import { readProvenPage } from '../verify/pageHistory';

/**
 * The lock page read without a clone: in the shared bare repository (with the server guard's
 * pinned settings), or from a git remote's URL (git driver only). Read-only: no session, no write.
 */
export interface PageRead {
  readonly file: ContainerFile;
  readonly record: LockRecord;
  readonly page: PageLocation;
}

/** In the shared bare repository: the page the server guard reads, with its pinned settings. */
export async function readPageInBareRepository(repo: string): Promise<PageRead> {
  const settings = await readServerSettings(repo);
  if (settings === undefined) {
    throw new LockConfigurationError(
      'This bare repository has no pinned Lockstep settings (hooks/lockstep-server.json), so it does not know where the lock page is. ' +
        'Run lockstep hooks install --server here, or run lockstep status in a clone (or lockstep status --remote URL for the git driver).',
      { setting: 'hooks/lockstep-server.json' },
    );
  }
  const { file } = settings;
  // No environment, like the guard: the pinned store is the one the fence reads.
  if (file.allowedSigners === undefined || file.driver === 'git') {
    // The git driver's page here is the lock ref, each of whose commits the server guard checked as it was pushed.
    const { record, page } = await readContainerPage(file, repo, serverDriverOptions(settings, repo));
    return { file, record, page };
  }
  // A signed page on a store every participant can write (file, SQL, Redis) is proven as the guard proves it: every step,
  // with the allowed signers of the pinned protected branch, from the guard's witness (a page set back past what the guard
  // proved reads tampered). A copy of it: a reader here never moves the guard's own witness.
  const git = gitIn(repo);
  const branch = file.protectedBranches[0];
  const revision = (
    await git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`]).catch(() => '')
  ).trim();
  if (revision === '') {
    throw new LockConfigurationError(
      `This container's lock page is signed, and this repository has no protected branch ${branch} to read its allowed signers from; an operator lands it first.`,
      { setting: 'allowedSigners' },
    );
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-bare-'));
  try {
    const witnessFile = path.join(scratch, 'witness');
    try {
      fs.copyFileSync(guardWitnessFile(repo, file.container), witnessFile);
    } catch {
      // None yet (no push proved the page), or not readable by this user: the page is proven from its creation.
    }
    const config = resolveConfig(serverDriverOptions(settings, repo), {});
    const { record, page } = await readProvenPage(config, file, { git, revision, witnessFile });
    return { file, record, page };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * From a remote's URL, without a clone: the committed `.lockstep.json` of the remote's default
 * branch, then the lock ref, fetched into a temporary bare repository that is removed afterwards.
 * Only the git driver keeps the page on the remote; other drivers say where to look instead.
 */
export async function readPageFromRemote(url: string): Promise<PageRead> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-remote-'));
  try {
    const git = gitIn(temp);
    await git.raw(['init', '--quiet', '--bare']);
    try {
      await git.raw(['fetch', '--quiet', '--depth', '1', '--end-of-options', url, 'HEAD']);
    } catch (cause) {
      throw new LockBackendError('git', 'The remote could not be read (check the URL and your access to it).', { cause });
    }
    const text = await git.raw(['cat-file', 'blob', `FETCH_HEAD:${CONTAINER_FILE}`]).catch(() => undefined);
    if (text === undefined) {
      throw new LockConfigurationError(
        `The remote's default branch has no committed ${CONTAINER_FILE}: it is not a Lockstep container (or its settings are not pushed yet).`,
        { setting: CONTAINER_FILE },
      );
    }
    const file = parseContainerFile(text);
    if (file.driver !== 'git') {
      throw new LockConfigurationError(
        `This container's lock page is in its ${file.driver} store, not on the git remote; --remote reads git-driver containers only. Run lockstep status in a clone, or in the shared bare repository.`,
        { setting: '--remote' },
      );
    }
    // No LOCKSTEP_* variable redirects it: the page is the one this remote holds. A signed page is proven
    // first, every step, as lockstep verify proves it: with the allowed signers of the first protected branch.
    const config = resolveConfig({ ...driverOptions(file, temp), gitDir: temp, gitRemote: url }, {});
    const signers = file.allowedSigners === undefined ? undefined : { git, revision: await protectedTip(git, url, file) };
    const { record, page } = await readProvenPage(config, file, signers);
    return { file, record, page: { ...page, location: `remote ${url.includes('://') ? withoutCredentials(url) : url}` } };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** The first protected branch's tip on the remote, fetched into the temporary repository (where the allowed signers are read). */
async function protectedTip(git: GitCommand, url: string, file: ContainerFile): Promise<string> {
  const branch = file.protectedBranches[0];
  try {
    await git.raw(['fetch', '--quiet', '--depth', '1', '--end-of-options', url, `+refs/heads/${branch}:refs/lockstep-signers`]);
  } catch (cause) {
    throw new LockBackendError(
      'git',
      `The protected branch ${branch} could not be read from the remote, where the signed page's allowed signers are; check your access to it.`,
      { cause },
    );
  }
  return (await git.raw(['rev-parse', '--verify', '--end-of-options', 'refs/lockstep-signers^{commit}'])).trim();
}
