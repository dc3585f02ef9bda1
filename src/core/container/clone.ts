import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../atomicReplace';
import { LockBackendError, LockConfigurationError, LockRefusedError } from '../errors';
import { gitIn, type GitCommand } from '../git/runner';
import { lastSetting, type SettingEntry } from '../git/cloneSettings';
import { ensurePrivateFolder } from './privateFolder';
import { sessionDir } from './session';

/**
 * The local clone, through git: where it is, who works in it, whether its work landed, and
 * the push options that prove its grant to the server's guard.
 */
export interface Clone {
  readonly root: string;
  readonly gitDir: string;
  readonly git: GitCommand;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The `setting` of the configuration error for a folder outside any git repository (exit 2). */
export const OUTSIDE_REPOSITORY = 'repository';

/**
 * Whether a container could not be opened because there is none here: no git repository (a
 * configuration error, exit 2) or a repository without `.lockstep.json` (refused, not-initialised).
 */
export function isNoContainerHere(error: unknown): boolean {
  return (
    (error instanceof LockRefusedError && error.reason === 'not-initialised') ||
    (error instanceof LockConfigurationError && error.setting === OUTSIDE_REPOSITORY)
  );
}

/** The clone `cwd` is in; `git` is a runner in `cwd` the caller already has (its `git rev-parse` runs there). */
export async function openClone(cwd: string, git: GitCommand = gitIn(cwd)): Promise<Clone> {
  if (!fs.existsSync(cwd)) {
    throw new LockConfigurationError('The folder given with --cwd does not exist.', { setting: 'cwd' });
  }
  let out: string;
  try {
    out = (await git.raw(['rev-parse', '--show-toplevel', '--absolute-git-dir'])).trim();
  } catch (cause) {
    throw new LockConfigurationError(
      'This folder is not inside a git repository; Lockstep works on a git clone (cd into one, or pass --cwd CLONE).',
      { setting: OUTSIDE_REPOSITORY, cause },
    );
  }
  const [root, gitDir] = out.split('\n').map(s => s.trim());
  return { root, gitDir, git: gitIn(root) };
}

/**
 * LOCKSTEP_IDENTITY, else `git config user.email` — asked here, or read from `settings`, the clone's
 * settings already read (cloneSettings.ts).
 */
export async function resolveIdentity(
  clone: Pick<Clone, 'git'>,
  env: Env,
  override?: string,
  settings?: Promise<readonly SettingEntry[]>,
): Promise<string> {
  const fromEnv = env.LOCKSTEP_IDENTITY?.trim() || override?.trim();
  if (fromEnv) return fromEnv;
  const email = (
    settings ? (lastSetting(await settings, 'user.email') ?? '') : await clone.git.raw(['config', '--get', 'user.email']).catch(() => '')
  ).trim();
  if (email) return email;
  throw new LockConfigurationError('No identity: set `git config user.email` (or LOCKSTEP_IDENTITY).', { setting: 'identity' });
}

/** The remote's default branch, as the default protected branch. */
export async function defaultBranch(clone: Clone, remote: string): Promise<string> {
  const symbolic = await clone.git
    .raw(['symbolic-ref', '--quiet', '--short', '--end-of-options', `refs/remotes/${remote}/HEAD`])
    .catch(() => '');
  if (symbolic.trim()) return symbolic.trim().slice(remote.length + 1);
  const listed = await clone.git.raw(['ls-remote', '--symref', '--end-of-options', remote, 'HEAD']).catch(() => '');
  const match = /^ref: refs\/heads\/(\S+)\s+HEAD/m.exec(listed);
  if (match) return match[1];
  const current = (await clone.git.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim();
  return current || 'main';
}

/**
 * Fetches one branch of `remote` into the ref `into`, and nothing else: no FETCH_HEAD, no tags, no background
 * maintenance or gc (git's next own fetch does those). For the fetches Lockstep makes on its own account.
 */
export function fetchBranch(git: GitCommand, remote: string, branch: string, into: string): Promise<string> {
  return git.raw([
    '-c',
    'fetch.writeFetchHead=false',
    '-c',
    'maintenance.auto=false',
    '-c',
    'gc.auto=0',
    'fetch',
    '--quiet',
    '--no-tags',
    '--end-of-options',
    remote,
    `+refs/heads/${branch}:${into}`,
  ]);
}

/**
 * The branch of `remote` that already has a committed `.lockstep.json` — its default branch, where
 * a teammate's `lockstep init` lands — or undefined. Without `fetch`, as far as this clone's
 * remote-tracking refs know (no network); with it, the branch is fetched into its remote-tracking
 * ref first (as `git fetch` would), and a remote that cannot be reached is a backend error.
 */
export async function containerFileOnRemote(
  clone: Clone,
  remote: string,
  file: string,
  options: { fetch: boolean },
): Promise<string | undefined> {
  // Without a fetch, only what the clone knows: the remote's HEAD as the clone recorded it.
  const branch = options.fetch
    ? await defaultBranch(clone, remote)
    : (await clone.git.raw(['symbolic-ref', '--quiet', '--short', '--end-of-options', `refs/remotes/${remote}/HEAD`]).catch(() => ''))
        .trim()
        .slice(remote.length + 1);
  if (branch === '') return undefined;
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.startsWith('-')) return undefined;
  const tracking = `refs/remotes/${remote}/${branch}`;
  if (options.fetch) {
    const listed = await clone.git.raw(['ls-remote', '--end-of-options', remote, `refs/heads/${branch}`]).catch(cause => {
      throw new LockBackendError(
        'git',
        `The remote ${remote} could not be reached to check whether a teammate has already made this repository a container; try again when it is reachable.`,
        { cause },
      );
    });
    if (!listed.includes(`\trefs/heads/${branch}`)) return undefined; // an empty remote: nobody has pushed anything
    await fetchBranch(clone.git, remote, branch, tracking).catch(cause => {
      throw new LockBackendError(
        'git',
        `The remote ${remote} could not be fetched to check whether a teammate has already made this repository a container; try again when it is reachable.`,
        { cause },
      );
    });
  }
  return await clone.git.raw(['cat-file', '-e', '--end-of-options', `${tracking}:${file}`]).then(
    () => branch,
    () => undefined,
  );
}

export interface LandingState {
  /** Tracked files with changes not committed (first few). */
  readonly dirty: readonly string[];
  readonly dirtyCount: number;
  /** Commits on HEAD that the remote's protected branch does not have. */
  readonly unpushed: number;
  readonly branch: string;
  /** HEAD's commit (full), '' before the first commit. */
  readonly head: string;
  /** Whether HEAD is on the remote's protected branch (its tip or below it). */
  readonly onRemote: boolean;
}

/**
 * `git status --porcelain=v2 --branch` read: HEAD's commit ('' before the first commit) and the tracked files
 * with changes (as git prints their paths; a rename names its new path).
 */
export function parseStatus(text: string): { head: string; changed: string[] } {
  let head = '';
  const changed: string[] = [];
  // Fields before the path: 8 for an ordinary change, 9 for a rename or copy, 10 for an unmerged entry.
  const fieldsBeforePath: Record<string, number> = { '1': 8, '2': 9, u: 10 };
  for (const line of text.split('\n')) {
    if (line.startsWith('# branch.oid ')) {
      const oid = line.slice('# branch.oid '.length).trim();
      head = /^[0-9a-f]{40,64}$/.test(oid) ? oid : '';
      continue;
    }
    const skip = fieldsBeforePath[line.slice(0, line.indexOf(' '))];
    if (skip === undefined) continue;
    const path = line.split(' ').slice(skip).join(' ');
    changed.push(path.split('\t')[0]);
  }
  return { head, changed };
}

/**
 * Has this clone's work landed? Asks the remote (its branch's tip, and a fetch when that tip is not
 * HEAD) so the answer reflects the remote, not a stale remote-tracking ref.
 */
export async function landingState(clone: Clone, remote: string, branch: string, options: { fetch?: boolean } = {}): Promise<LandingState> {
  const unreachable = (cause: unknown) => {
    throw new LockBackendError(
      'git',
      `The remote ${remote} could not be reached to check that your work has landed; try again when it is reachable.`,
      { cause },
    );
  };
  // The work tree's status (with HEAD's commit) and the remote's tip are independent: asked side by side. Right
  // after a push (the usual release) the remote's tip is HEAD itself, and one `ls-remote` settles it, no fetch.
  const [status, remoteTip] = await Promise.all([
    clone.git.raw(['status', '--porcelain=v2', '--branch', '--untracked-files=no']).then(parseStatus),
    options.fetch === false
      ? undefined
      : clone.git.raw(['ls-remote', '--end-of-options', remote, `refs/heads/${branch}`]).then(
          out =>
            out
              .split('\n')
              .map(line => line.split('\t'))
              .find(([, ref]) => ref === `refs/heads/${branch}`)?.[0] ?? '',
          unreachable,
        ),
  ]);
  const dirty = { dirty: status.changed.slice(0, 5), dirtyCount: status.changed.length, branch, head: status.head };
  if (status.head && remoteTip === status.head) return { ...dirty, unpushed: 0, onRemote: true };
  // Otherwise count what the remote lacks against a fresh copy of its branch. `fetch: false` (status): judge by
  // the remote-tracking ref as it is, touching nothing. The fetch writes no FETCH_HEAD and starts no background
  // maintenance (git's next own fetch does that).
  if (options.fetch !== false) {
    await fetchBranch(clone.git, remote, branch, `refs/remotes/${remote}/${branch}`).catch(unreachable);
  }
  // Where the remote's branch is and, when it exists, how far HEAD (known from the status) is ahead of it.
  const tracking = `refs/remotes/${remote}/${branch}`;
  const head = status.head;
  const [hasRemote, ahead] = await Promise.all([
    clone.git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', tracking]).then(
      s => s.trim(),
      () => '',
    ),
    clone.git.raw(['rev-list', '--count', '--end-of-options', `${tracking}..HEAD`]).catch(() => undefined),
  ]);
  let unpushed = 0;
  if (head) {
    unpushed = hasRemote
      ? Number((ahead ?? (await clone.git.raw(['rev-list', '--count', '--end-of-options', `${tracking}..HEAD`]))).trim())
      : Number((await clone.git.raw(['rev-list', '--count', 'HEAD'])).trim());
  }
  return { ...dirty, unpushed, onRemote: head !== '' && hasRemote !== '' && unpushed === 0 };
}

/**
 * The remote's commit of `branch` as the remote answers now (`fresh`), or, when it does not answer within
 * `withinMs`, as the clone last fetched it; undefined when neither is known.
 */
export async function remoteBranchTip(
  clone: Clone,
  remote: string,
  branch: string,
  withinMs: number,
): Promise<{ commit: string; fresh: boolean } | undefined> {
  const isCommit = (text: string) => /^[0-9a-f]{40,64}$/.test(text);
  const asked = clone.git.raw(['ls-remote', '--end-of-options', remote, `refs/heads/${branch}`]).then(
    out =>
      out
        .split('\n')
        .map(line => line.split('\t'))
        .find(([, ref]) => ref === `refs/heads/${branch}`)?.[0] ?? '',
    () => undefined,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>(resolve => {
    timer = setTimeout(resolve, withinMs, undefined);
    timer.unref();
  });
  const tip = await Promise.race([asked, late]);
  clearTimeout(timer);
  if (tip !== undefined) return isCommit(tip) ? { commit: tip, fresh: true } : undefined;
  const tracking = (
    await clone.git
      .raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/remotes/${remote}/${branch}^{commit}`])
      .catch(() => '')
  ).trim();
  return isCommit(tracking) ? { commit: tracking, fresh: false } : undefined;
}

/**
 * Whether `head`, already on the remote's branch, landed under a grant: it was not on the branch when the
 * grant began (`base`, as the remote answered at acquire). While a grant is live no one else lands, so that
 * is the grant's own landing. When the base is only the clone's last fetch (the remote did not answer at
 * acquire, or the session predates this check) the branch may have moved since, so the commit must also be
 * the holder's own (its committer or author email is the identity): a clone that pulled a teammate's work
 * and pushed nothing never names that work as its landing.
 */
export async function landedUnderGrant(
  clone: Clone,
  head: string,
  base: { commit: string; fresh: boolean } | undefined,
  identity: string,
): Promise<boolean> {
  if (base !== undefined) {
    if (head === base.commit) return false;
    const inBase = await clone.git.raw(['merge-base', '--is-ancestor', '--end-of-options', head, base.commit]).then(
      () => true,
      () => false,
    );
    if (inBase) return false;
    if (base.fresh) return true;
  }
  const emails = (await clone.git.raw(['log', '-1', '--format=%ce%x00%ae', '--end-of-options', head, '--']).catch(() => ''))
    .trim()
    .toLowerCase()
    .split('\0');
  return emails.includes(identity.toLowerCase());
}

// ---------------------------------------------------------------------------------------------
// Push options: the proof of grant travels with every push, read by the server's pre-receive guard.
// The values live in `.git/lockstep/push.config` (0600), pulled in by one `include.path` entry, so
// the proof never appears on a command line.

const PUSH_CONFIG = 'push.config';
const INCLUDE = 'lockstep/push.config';

export async function writePushProof(clone: Clone, grant: number, proof: string, sharedRemote: string): Promise<void> {
  const dir = sessionDir(clone.gitDir);
  ensurePrivateFolder(dir);
  // push.recurseSubmodules = check: git hands push options to the submodules' pushes (on their
  // command lines), so while the proof is configured no push recurses by configuration; the client
  // guard refuses one that recurses by the command line or by a later setting. lockstep.sharedRemote:
  // the one remote the proof may go to, for the client guard on any branch (with or without .lockstep.json).
  writeFileAtomically(
    path.join(dir, PUSH_CONFIG),
    `# Written by Lockstep on acquire; removed on release.\n[push]\n\tpushOption = lockstep-grant=${grant}\n\tpushOption = lockstep-proof=${proof}\n\trecurseSubmodules = check\n` +
      `[lockstep]\n\tsharedRemote = ${sharedRemote}\n`,
    "The clone's push proof file (.git/lockstep/push.config)",
  );
  await includePushConfig(clone);
}

/**
 * Adds the `include.path` entry for push.config (once). Acquire calls it before taking the lock,
 * so that a clone whose .git/config cannot be written fails before it holds anything.
 */
export async function includePushConfig(clone: Clone): Promise<void> {
  const includes = await clone.git.raw(['config', '--local', '--get-all', 'include.path']).catch(() => '');
  if (includes.split('\n').includes(INCLUDE)) return;
  try {
    await clone.git.raw(['config', '--local', '--add', 'include.path', INCLUDE]);
  } catch (cause) {
    throw new LockConfigurationError(
      'The push proof could not be set up: .git/config could not be written (another git process may hold .git/config.lock). Try again.',
      { setting: 'include.path', cause },
    );
  }
}

/** Whether this clone has the proof configured for its pushes (it holds, or held, a grant). */
export function hasPushProof(clone: Clone): boolean {
  return fs.existsSync(path.join(sessionDir(clone.gitDir), PUSH_CONFIG));
}

export function removePushProof(clone: Clone): void {
  fs.rmSync(path.join(sessionDir(clone.gitDir), PUSH_CONFIG), { force: true });
}
