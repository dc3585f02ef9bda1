import {
  carriesProof,
  checkProofLeak,
  configuredUrls,
  containerFileAt,
  Container,
  CONTAINER_DEFAULTS,
  CONTAINER_FILE,
  digestsEqual,
  fenceClientPush,
  type GitCommand,
  gitIn,
  hashProof,
  LockError,
  type LockFencedError,
  LockRefusedError,
  parsePushArguments,
  proofsSent,
  pushArgumentsOf,
  readContainerFile,
  type RecordAtRevision,
  readCloneSettings,
  refusalGist,
  sameRepository,
  type SettingEntry,
} from '../../core/application';
import type { CommandContext } from '../command';
import { parsePrePush, type PushedRef, readStdin, ZERO_SHA } from './hookInput';
import { announcedArguments, gitProcessArguments, unseenCommandLine } from './pushArguments';

/**
 * `lockstep guard pre-push REMOTE URL` (git's pre-push hook). First, on every push from any branch
 * or worktree, whether it would hand the live proof of grant to anything but the shared remote.
 * Then, pushes that touch no protected branch of the container's shared remote pass without
 * reading the store. Otherwise the clone must hold the live lease and the current grant; a damaged
 * record or an unreachable backend refuses the push (fail closed).
 */
export async function guardPrePush(context: CommandContext): Promise<number> {
  const [remoteName, remoteUrl] = context.args;
  const pushed = parsePrePush(await readStdin());
  // One git runner for the push's own reads (the leak check's settings, the identity, the clone). The container
  // opens (git start-up, .lockstep.json) beside the leak check's git runs; the leak is judged first, whatever the
  // opening says: a branch without .lockstep.json still pushes the configured proof.
  const git = gitIn(context.cwd);
  // The clone's settings, the leak check's among them, in one git run that the opening reads too.
  const settings = readCloneSettings(git, PUSH_SETTINGS);
  const opening = Container.open({ cwd: context.cwd, env: context.env, git, settings, onNotice: line => context.out.warn(line) }).then(
    container => ({ container }),
    (error: unknown) => ({ error }),
  );
  let container: Container;
  try {
    const leak = await proofLeak(git, context, remoteName ?? '', remoteUrl ?? '', await settings, opening);
    if (leak && (await proofIsLive(await opening, leak.proofs))) throw new LockRefusedError('proof-would-leak', leak.message);
    const opened = await opening;
    if ('error' in opened) throw opened.error;
    container = opened.container;
  } catch (error) {
    const opened = await opening;
    if ('container' in opened) await opened.container.close();
    // No .lockstep.json in this work tree: nothing to guard, unless the clone's default branch commits one (checkUnsettled).
    if (error instanceof LockRefusedError && error.reason === 'not-initialised') return checkUnsettled(git, pushed);
    throw error;
  }
  try {
    const shared = await isSharedRemote(container, remoteName, remoteUrl, await settings);
    const protectedRefs = new Set(container.file.protectedBranches.map(b => `refs/heads/${b}`));
    const touching = pushed.filter(p => protectedRefs.has(p.remoteRef));
    if (touching.length === 0 || !shared) return 0;
    // The page is read once; the audit of a refusal or the first landing announcement starts from this read.
    let seen: RecordAtRevision;
    let verdict: LockFencedError | undefined;
    // git read the push's options (the proof) before this hook ran: a proof this read writes goes with the next push.
    const proofBefore = !container.file.serverGuard || container.hasPushProof();
    try {
      seen = await container.read();
      verdict = fenceClientPush(seen.record, container.session(), Date.now(), {
        identity: container.identity,
        settings: container.settings,
      });
    } catch (error) {
      // Fail closed, keeping the error's code (and so its exit code) and saying why the push stops.
      if (error instanceof LockError) {
        throw new LockError(error.code, `The push is refused because the lock could not be checked — ${error.message}`, { cause: error });
      }
      throw error;
    }
    if (verdict) {
      // Refused pushes that reach the guard are audited on the page (folded when repeated).
      await container.auditRefusedPush(
        `client guard refused a push to ${touching.map(t => t.remoteRef.replace('refs/heads/', '')).join(', ')}: ${refusalGist(verdict.message)}`,
        seen,
      );
      throw verdict;
    }
    if (!proofBefore && container.hasPushProof()) {
      throw new LockRefusedError(
        'not-landed',
        `This check just finished your interrupted acquire of grant #${container.session()?.grant} (or wrote its lost push proof), after git had read this push's options: the push carries no proof, and the server guard would refuse it. Run the same push again; it carries the proof now.`,
      );
    }
    // Each landing is announced on the page before git sends it (what a forge's `lockstep verify` checks); after an
    // announcement is written the page read above is stale, and the next one reads it again.
    let unchanged: RecordAtRevision | undefined = seen;
    for (const p of container.announcesLandings ? touching : []) {
      if (ZERO_SHA.test(p.localSha)) continue; // a deletion lands no commit
      const { announced } = await container.announceLanding(
        { branch: p.remoteRef.slice('refs/heads/'.length), from: ZERO_SHA.test(p.remoteSha) ? null : p.remoteSha, to: p.localSha },
        unchanged,
      );
      if (announced) unchanged = undefined;
    }
    context.out.note(
      `lockstep: grant #${container.session()?.grant} verified for ${touching.map(t => t.remoteRef.replace('refs/heads/', '')).join(', ')}.`,
    );
    return 0;
  } finally {
    await container.close();
  }
}

/**
 * A push from a work tree without `.lockstep.json` (a checkout of a branch from before the container, or the file
 * removed) in a clone whose fetched default branch commits one: the repository is a container all the same, and the
 * guard cannot check the lock without the settings this checkout lacks. A push of a branch those settings protect is
 * refused (fail closed; settings it cannot read protect every branch); anything else passes, as from a folder that is
 * no container.
 */
async function checkUnsettled(git: GitCommand, pushed: readonly PushedRef[]): Promise<number> {
  const head = `refs/remotes/${CONTAINER_DEFAULTS.remote}/HEAD`;
  const committed = await git.raw(['cat-file', '-e', '--end-of-options', `${head}:${CONTAINER_FILE}`]).then(
    () => true,
    () => false,
  );
  if (!committed) return 0;
  // Read as verify reads a committed .lockstep.json (its size bounded before it is read).
  const protectedRefs = await containerFileAt(git, head).then(
    file => new Set(file.protectedBranches.map(b => `refs/heads/${b}`)),
    () => undefined,
  );
  const touching = pushed.filter(p => protectedRefs === undefined || protectedRefs.has(p.remoteRef));
  if (touching.length === 0) return 0;
  const names = touching.map(p => p.remoteRef.replace(/^refs\/heads\//, '')).join(', ');
  throw new LockRefusedError(
    'not-initialised',
    `The push of ${names} is refused: this checkout has no ${CONTAINER_FILE}, but the default branch of ${CONTAINER_DEFAULTS.remote} commits one,` +
      " so this repository is a container and the lock cannot be checked from here. Check out a branch that has the container's settings" +
      ' (its default branch, or a branch made from it) and push again.',
  );
}

async function isSharedRemote(
  container: Container,
  name: string | undefined,
  url: string | undefined,
  settings: readonly SettingEntry[],
): Promise<boolean> {
  if (name === container.file.remote) return true;
  // The shared remote's fetch URLs: as the settings already read say them where they are certain, else as git lists them.
  const shared =
    configuredUrls(settings, container.file.remote)?.fetch ??
    (await container.clone.git.raw(['remote', 'get-url', '--all', '--end-of-options', container.file.remote]).catch(() => ''))
      .split('\n')
      .filter(line => line.trim() !== '');
  // The same repository spelt another way (file://, a relative path, a trailing slash, another remote's name) is fenced too.
  return url !== undefined && sameRepository(url, shared, container.clone.root);
}

/**
 * Would this push hand a proof of grant to anything but the shared remote? Everything as git
 * resolves it for this push: the settings (includes followed, so the proof configured in the
 * common git dir is found from a linked worktree too; `git -c` included), the command line of the
 * `git push` (abbreviations, aliases), the URL it pushes to (the hook's second argument, after
 * pushurl and pushInsteadOf) against the URL the shared remote is fetched from.
 */
async function proofLeak(
  git: GitCommand,
  context: CommandContext,
  remoteName: string,
  pushUrl: string,
  config: readonly SettingEntry[],
  opening: Promise<{ container: Container } | { error: unknown }>,
): Promise<{ message: string; proofs: string[] } | undefined> {
  const aliases = new Map(
    config
      .filter(([key, value]) => key.startsWith('alias.') && value !== null)
      .map(([key, value]) => [key.slice('alias.'.length), value as string]),
  );
  const argv = gitProcessArguments(context.env.LOCKSTEP_GIT_PUSH_PID) ?? announcedArguments(context.env);
  const args = argv && pushArgumentsOf(argv, aliases);
  const commandLine = args && parsePushArguments(args);
  if (!carriesProof({ config, commandLine })) return undefined;
  const sharedRemote =
    config.filter(([key]) => key === 'lockstep.sharedremote').pop()?.[1] ?? (await committedRemote(context.cwd, opening));
  const sharedUrls =
    configuredUrls(config, sharedRemote)?.fetch ??
    (await git.raw(['remote', 'get-url', '--all', '--end-of-options', sharedRemote]).catch(() => '')).split('\n').filter(Boolean);
  // The shared repository spelt another way (file://, a relative path, a trailing slash) receives the proof as the shared remote does.
  const sameAsShared = sameRepository(pushUrl, sharedUrls, context.cwd);
  const message =
    checkProofLeak({
      remoteName,
      pushUrl,
      sharedRemote,
      sharedUrls: sameAsShared ? [...sharedUrls, pushUrl] : sharedUrls,
      config,
      commandLine,
    }) ?? unseenCommandLine(process.platform, argv);
  return message === undefined ? undefined : { message, proofs: proofsSent({ config, commandLine }) };
}

/**
 * The shared remote named in the work tree's .lockstep.json, for a proof configured before the name was kept beside
 * it: as the container opening beside the leak check read it; where that opening failed, the file read on its own
 * (the default when there is none).
 */
async function committedRemote(cwd: string, opening: Promise<{ container: Container } | { error: unknown }>): Promise<string> {
  const opened = await opening;
  if ('container' in opened) return opened.container.file.remote;
  try {
    return readContainerFile(cwd).remote;
  } catch {
    return CONTAINER_DEFAULTS.remote;
  }
}

/** The settings the leak check reads besides those of the opening (readCloneSettings), as git resolves them for this push (`git -c` included). */
const PUSH_SETTINGS = ['push\\.(pushoption|gpgsign|recursesubmodules)', 'submodule\\.recurse', 'lockstep\\.sharedremote', 'alias\\..*'];

/**
 * A proof that is not the page's current holder's proves nothing, so it may go anywhere. Anything
 * that cannot be read counts as live — no container in this work tree (a branch without
 * .lockstep.json), a store out of reach: the guard then refuses rather than risk the proof.
 */
async function proofIsLive(opened: { container: Container } | { error: unknown }, proofs: readonly string[]): Promise<boolean> {
  if (!('container' in opened)) return true;
  try {
    const { record } = await opened.container.read();
    const h = record.holder;
    return h !== null && proofs.some(proof => /^[0-9a-f]{64}$/.test(proof) && digestsEqual(h.proofHash, hashProof(proof)));
  } catch {
    return true;
  }
}
