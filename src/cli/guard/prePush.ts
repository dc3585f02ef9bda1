import { Container } from '../../core/container/container';
import { LockError, LockRefusedError } from '../../core/errors';
import { fenceClientPush, refusalGist } from '../../core/fencing';
import type { CommandContext } from '../command';
import { checkProofLeak } from '../../core/guard/proofLeak';
import { hasPushProof } from '../../core/container/clone';
import { gitIn, type GitCommand } from '../../core/git/runner';
import { parsePrePush, readStdin } from './hookInput';
import { pushArguments } from './pushArguments';

/**
 * `lockstep guard pre-push REMOTE URL` (git's pre-push hook). Pushes that touch no protected
 * branch of the container's shared remote pass without reading the store. Otherwise the clone
 * must hold the live lease and the current grant; a damaged record or an unreachable backend
 * refuses the push (fail closed).
 */
export async function guardPrePush(context: CommandContext): Promise<number> {
  const [remoteName, remoteUrl] = context.args;
  const pushed = parsePrePush(await readStdin());
  // The push settings' `git config` runs beside the clone's own git start-up (same repository, from cwd).
  const pushConfig = pushSettings(gitIn(context.cwd));
  let container: Container;
  try {
    container = await Container.open({ cwd: context.cwd, env: context.env });
  } catch (error) {
    // Not a container (no .lockstep.json): there is nothing to guard.
    if (error instanceof LockRefusedError && error.reason === 'not-initialised') return 0;
    throw error;
  }
  try {
    const shared = await isSharedRemote(container, remoteName, remoteUrl);
    if (hasPushProof(container.clone)) {
      const push = await pushConfig;
      const leak = checkProofLeak({
        sharedRemote: shared,
        remoteName: remoteName ?? remoteUrl ?? 'this remote',
        configuredOptions: push.get('push.pushoption') ?? [],
        pushArgs: pushArguments(context.env.LOCKSTEP_GIT_PUSH_PID),
        gpgSign: push.get('push.gpgsign')?.pop() ?? '',
        recurseSubmodules: push.get('push.recursesubmodules')?.pop() ?? '',
      });
      if (leak && await proofIsLive(container)) throw new LockRefusedError('proof-would-leak', leak);
    }
    const protectedRefs = new Set(container.file.protectedBranches.map(b => `refs/heads/${b}`));
    const touching = pushed.filter(p => protectedRefs.has(p.remoteRef));
    if (touching.length === 0 || !shared) return 0;
    let verdict;
    try {
      const { record } = await container.read();
      verdict = fenceClientPush(record, container.session(), Date.now(), { identity: container.identity, settings: container.settings });
    } catch (error) {
      // Fail closed, keeping the error's code (and so its exit code) and saying why the push stops.
      if (error instanceof LockError) {
        throw new LockError(error.code, `The push is refused because the lock could not be checked — ${error.message}`, { cause: error });
      }
      throw error;
    }
    if (verdict) {
      // Refused pushes that reach the guard are audited on the page (folded when repeated).
      await container.auditRefusedPush(`client guard refused a push to ${touching.map(t => t.remoteRef.replace('refs/heads/', '')).join(', ')}: ${refusalGist(verdict.message)}`);
      throw verdict;
    }
    context.out.note(`lockstep: grant #${container.session()?.grant} verified for ${touching.map(t => t.remoteRef.replace('refs/heads/', '')).join(', ')}.`);
    return 0;
  } finally {
    await container.close();
  }
}

async function isSharedRemote(container: Container, name: string | undefined, url: string | undefined): Promise<boolean> {
  if (name === container.file.remote) return true;
  const shared = (await container.clone.git.raw(['remote', 'get-url', '--end-of-options', container.file.remote]).catch(() => '')).trim();
  return shared !== '' && shared === url;
}

/**
 * Every value of the push settings the leak check reads, as git resolves them for this push (`git -c`
 * included), in one git run: lower-cased key → values in git's order.
 */
async function pushSettings(git: GitCommand): Promise<Map<string, string[]>> {
  const out = await git.raw(['config', '-z', '--get-regexp', '^push\\.(pushoption|gpgsign|recursesubmodules)$']).catch(() => '');
  const values = new Map<string, string[]>();
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const newline = entry.indexOf('\n');
    // A key without "=value" (`[push] gpgSign`) is listed without a newline: git reads it as true.
    const [key, value] = newline < 0 ? [entry, 'true'] : [entry.slice(0, newline), entry.slice(newline + 1)];
    values.set(key, [...(values.get(key) ?? []), value]);
  }
  return values;
}

/**
 * A proof whose grant is no longer the live one proves nothing, so it may go anywhere. Anything
 * that cannot be read counts as live: the guard then refuses rather than risk the proof.
 */
async function proofIsLive(container: Container): Promise<boolean> {
  try {
    const { record } = await container.read();
    return fenceClientPush(record, container.session(), Date.now()) === undefined;
  } catch {
    return true;
  }
}

