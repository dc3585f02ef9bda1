import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DoctorFacts } from './diagnosis';
import { LockBackendError, LockError, LockNoPageError, LockStorageError, LockTamperedPageError } from '../errors';
import { isNoContainerHere } from '../container/clone';
import { transportOf } from '../container/sharedRemote';
import { gitIn } from '../git/runner';
import { signingSetup, signsCheckedSteps } from '../git/signingKey';
import { pinnedDriftWarning } from '../guard/pinnedDrift';
import { readServerSettings } from '../hooks/install';
import { HOOK_MARKER } from '../hooks/hookScripts';
import { lapseLine } from '../lockStatus';
import { Container, type OpenContainerOptions } from '../container/container';
import { etcdTransport } from '../stores/etcd/etcdTls';

/**
 * Gathers what `lockstep doctor` (and VS Code's Diagnose) reports, read-only: it writes nothing to
 * the store and nothing to the clone, and it prints no credential (page locations come without).
 */
export async function gatherDoctorFacts(options: OpenContainerOptions): Promise<DoctorFacts> {
  let container: Container;
  try {
    container = await Container.open(options);
  } catch (error) {
    const kind = error instanceof LockNoPageError ? 'page-mismatch' : isNoContainerHere(error) ? 'not-initialised' : 'other';
    return { container: { ok: false, kind, why: error instanceof LockError ? error.message : 'The container could not be opened.' } };
  }
  try {
    const page = await container.page().catch(() => undefined);
    const file = container.file;
    const facts: { -readonly [K in keyof DoctorFacts]: DoctorFacts[K] } = {
      container: {
        ok: true,
        id: file.container,
        driver: page?.driver ?? container.config.driver,
        prefix: container.config.prefix,
        location: page?.location ?? '(unknown)',
        serverGuard: file.serverGuard,
        remote: file.remote,
      },
      identity: container.identity,
    };
    try {
      const { record } = await container.read();
      facts.page = { held: true, grant: record.grant };
      const session = container.session();
      const status = container.describe(record);
      facts.session =
        session === undefined
          ? null
          : { grant: session.grant, state: status.state, ...(status.lapse ? { lapse: lapseLine(status.lapse) } : {}) };
      const pending = container.pendingAcquire();
      if (pending) facts.pendingAcquire = { grant: pending.grant };
      const h = record.holder;
      if (status.heldElsewhere && h !== null) facts.heldWithoutToken = { grant: h.grant, expiresAt: h.expiresAt };
    } catch (error) {
      const kind =
        error instanceof LockNoPageError
          ? 'no-page'
          : error instanceof LockTamperedPageError
            ? 'tampered'
            : error instanceof LockBackendError
              ? 'backend'
              : error instanceof LockStorageError
                ? 'storage'
                : 'other';
      facts.page = { held: false, kind, why: error instanceof LockError ? error.message : 'The page could not be read.' };
    }
    if (page?.driver === 'etcd') {
      facts.cluster = await clusterOf(container);
      facts.etcdTls = etcdTransport(container.config);
    }
    if (container.config.driver === 'git' || container.file.allowedSigners !== undefined) facts.signing = await signing(container);
    facts.clientHook = await clientHook(container);
    const remotePath = await localRemotePath(container);
    if (remotePath !== undefined) facts.serverHook = await serverHook(remotePath);
    if (file.serverGuard && remotePath === undefined) facts.pushOptions = await advertisesPushOptions(container);
    facts.skew = await measureSkew(container);
    return facts;
  } finally {
    await container.close();
  }
}

/** etcd: members, majority and leader as the cluster answers now (one round trip each of member list and status). */
async function clusterOf(container: Container): Promise<DoctorFacts['cluster']> {
  try {
    const deployment = await container.deployment();
    if (deployment?.members === undefined || deployment.quorum === undefined)
      return { unanswered: 'the driver does not describe its cluster' };
    return { members: deployment.members, quorum: deployment.quorum, leaderSeen: deployment.leaderSeen === true };
  } catch (error) {
    return { unanswered: error instanceof LockError ? error.message : 'the cluster could not be asked' };
  }
}

async function signing(container: Container): Promise<DoctorFacts['signing']> {
  const setup = await signingSetup(container.clone.git).catch(() => ({ key: false, format: 'other' as const }));
  const where = container.file.allowedSigners;
  const openpgp = container.file.openpgpSigners;
  const key = signsCheckedSteps(setup, openpgp !== undefined);
  return {
    required: where !== undefined,
    ...(where !== undefined ? { allowedSigners: where } : {}),
    ...(openpgp !== undefined ? { openpgpSigners: openpgp } : {}),
    key,
  };
}

async function clientHook(container: Container): Promise<'installed' | 'missing' | 'foreign'> {
  const dir = (await container.clone.git.raw(['rev-parse', '--git-path', 'hooks']).catch(() => '')).trim();
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(container.clone.root, dir || '.git/hooks', 'pre-push'), 'utf8');
  } catch {
    return 'missing';
  }
  return text.includes(HOOK_MARKER) ? 'installed' : 'foreign';
}

/** The shared remote's folder, when it is a local path (then its hooks can be looked at). */
async function localRemotePath(container: Container): Promise<string | undefined> {
  const url = (await container.clone.git.raw(['remote', 'get-url', '--end-of-options', container.file.remote]).catch(() => '')).trim();
  const where = url === '' ? undefined : transportOf(url);
  if (where?.protocol !== 'file' || where.path === undefined) return undefined;
  const dir = path.resolve(container.clone.root, where.path);
  return fs.existsSync(dir) ? dir : undefined;
}

/** The shared bare repository's server guard: hook, pinned settings (and whether they went stale), push options. */
export async function serverHook(
  repo: string,
): Promise<{ preReceive: boolean; pinned: boolean; advertisesPushOptions: boolean; stale?: string }> {
  const git = gitIn(repo);
  const hooks = path.resolve(repo, (await git.raw(['rev-parse', '--git-path', 'hooks']).catch(() => 'hooks')).trim());
  let preReceive = false;
  try {
    preReceive = fs.readFileSync(path.join(hooks, 'pre-receive'), 'utf8').includes(HOOK_MARKER);
  } catch {
    preReceive = false;
  }
  const settings = await readServerSettings(repo).catch(() => undefined);
  const stale = settings === undefined ? undefined : await pinnedDriftWarning(git, settings).catch(() => undefined);
  const advertises = (await git.raw(['config', '--bool', '--get', 'receive.advertisePushOptions']).catch(() => '')).trim() === 'true';
  return { preReceive, pinned: settings !== undefined, advertisesPushOptions: advertises, ...(stale !== undefined ? { stale } : {}) };
}

/**
 * A dry-run push with a harmless push option, skipping hooks and with the configured options (the
 * proof) cleared: git refuses it before sending anything when the remote does not advertise them.
 */
async function advertisesPushOptions(container: Container): Promise<boolean | undefined> {
  const output = await container.clone.git
    .run([
      '-c',
      'push.pushOption=',
      'push',
      '--dry-run',
      '--no-verify',
      '--porcelain',
      '-o',
      'lockstep-doctor',
      '--end-of-options',
      container.file.remote,
      'HEAD:refs/heads/lockstep-doctor-probe',
    ])
    .catch(() => undefined);
  if (output === undefined) return undefined;
  if (output.code === 0) return true;
  return /does not support push options/i.test(output.stderr) ? false : undefined;
}

/** The file driver's folder has the store's clock (a shared disk's server); the others give none to read. */
async function measureSkew(container: Container): Promise<DoctorFacts['skew']> {
  if (container.config.driver !== 'file') {
    return { unmeasured: `the ${container.config.driver} driver offers no clock to read without writing to it` };
  }
  const probe = path.join(container.config.path, `.lockstep-doctor-${process.pid}`);
  try {
    const before = Date.now();
    fs.writeFileSync(probe, '', { mode: 0o600 });
    const after = Date.now();
    const stamped = fs.statSync(probe).mtimeMs;
    const mid = (before + after) / 2;
    return { ms: Math.round(stamped - mid), how: 'the modification time of a file written in the store folder' };
  } catch {
    return { unmeasured: 'the store folder could not be written' };
  } finally {
    fs.rmSync(probe, { force: true });
  }
}
