import { LockError } from '../errors';
import type { Finding } from './diagnosis';
import { formatClock } from '../format';
import { readServerSettings } from '../hooks/install';
import { serverHook } from './doctorFacts';
import { readPageInBareRepository } from './pageFromAnywhere';

/**
 * `lockstep doctor` in the shared bare repository (the remote), where there is no clone and no
 * session: the server guard (hook, pinned settings, whether they went stale), push options, and
 * whether the pinned store holds the container's page. Read-only, like the clone's checks.
 */
export async function bareRepositoryFindings(repo: string, now: number): Promise<Finding[]> {
  const out: Finding[] = [
    { check: 'repository', level: 'ok', found: 'a shared bare repository (the remote): checking its server guard and the page it reads' },
  ];
  const hook = await serverHook(repo);
  if (!hook.preReceive || !hook.pinned) {
    out.push({
      check: 'server-hook',
      level: 'warning',
      found: hook.preReceive
        ? 'a Lockstep pre-receive guard without pinned settings'
        : "no Lockstep pre-receive guard: only the clients' pre-push hooks fence this remote",
      fix: 'lockstep hooks install --server (here; see lockstep hooks install --help for its options)',
    });
    return out;
  }
  out.push({ check: 'server-hook', level: 'ok', found: 'the pre-receive guard runs with pinned settings' });
  if (hook.stale !== undefined) {
    out.push({
      check: 'server-settings',
      level: 'warning',
      found: hook.stale,
      fix: 'lockstep hooks install --server (with the same options as before), then lockstep hooks status --server',
    });
  }
  const settings = await readServerSettings(repo).catch(() => undefined);
  if (settings?.file.serverGuard) {
    out.push(
      hook.advertisesPushOptions
        ? { check: 'push-options', level: 'ok', found: 'push options are advertised (the proof of grant can travel)' }
        : {
            check: 'push-options',
            level: 'error',
            found: 'serverGuard is on, and this repository does not advertise push options: every protected push will be refused',
            fix: 'git config receive.advertisePushOptions true',
          },
    );
  }
  try {
    const { record, page } = await readPageInBareRepository(repo);
    const holder =
      record.holder === null
        ? 'free'
        : `grant #${record.holder.grant} held by ${record.holder.identity} until ${formatClock(record.holder.expiresAt)}${record.holder.expiresAt <= now ? ' (silent)' : ''}`;
    out.push({
      check: 'page',
      level: 'ok',
      found: `the pinned store (${page.driver} driver at ${page.location}) holds the page: ${holder}`,
    });
  } catch (error) {
    out.push({
      check: 'page',
      level: 'error',
      found: error instanceof LockError ? error.message : 'The pinned store could not be read.',
      fix: 'Make the pinned store reachable from this machine (credentials in the environment), or reinstall the server guard with the right store: lockstep hooks install --server',
    });
  }
  return out;
}
