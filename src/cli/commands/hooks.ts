import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import {
  describeServerSettings,
  gitIn,
  installClientHooks,
  installServerHooks,
  isBareRepository,
  LockConfigurationError,
  pinnedDriftWarning,
  PUSHER_VARIABLES,
  type PusherVariable,
  readServerSettings,
  type ServerStore,
} from '../../core/application';

export const hooksInstallCommand: Command = {
  name: 'hooks install',
  summary: 'install the pre-push guard (or, with --server, the pre-receive guard)',
  help: `usage: lockstep hooks install
       lockstep hooks install --server [--branch B] [--require-proof | --no-require-proof]
                              [--pusher-variable VAR --pusher USER=IDENTITY …] [--skew S]

In a clone: writes a pre-push hook that runs \`lockstep guard pre-push\` (honours core.hooksPath;
an existing pre-push hook is kept and runs first; running it again is harmless).

With --server, in the shared bare repository: pins what the guard decides with in
hooks/lockstep-server.json (mode 0600) — the container, protected branches, operators and store
from the committed .lockstep.json of branch B (default: the repository's HEAD branch), the store's
folder and credentials from this shell's LOCKSTEP_PATH, LOCKSTEP_REDIS_URL and
LOCKSTEP_DATABASE_URL — then writes a pre-receive hook that reads only that file, and sets
receive.advertisePushOptions. Nothing a push carries changes these settings: after a change of
.lockstep.json, run this again on the server.
  --require-proof      protected pushes must prove the live grant (default: the committed serverGuard)
  --pusher-variable    the variable your git server sets to the authenticated user
                       (${PUSHER_VARIABLES.join(', ')})
  --pusher USER=ID     maps a server user to a Lockstep identity (repeat); then lock-record changes
                       and operator clears in another identity's name are refused
  --skew S             clock difference allowed between clients and the server (default 120 s)`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      server: { type: 'boolean' },
      branch: { type: 'string' },
      'require-proof': { type: 'boolean' },
      'no-require-proof': { type: 'boolean' },
      'pusher-variable': { type: 'string' },
      pusher: { type: 'string', multiple: true },
      skew: { type: 'string' },
    });
    const paths = { node: process.execPath, cli: fs.realpathSync(process.argv[1] ?? __filename) };
    if (!values.server) {
      if (await isBareRepository(context.cwd)) {
        throw new LockConfigurationError(
          'This is a bare repository (a shared remote): its guard is the server one. Run lockstep hooks install --server here, and lockstep hooks install in each clone.',
          { setting: '--server' },
        );
      }
      const installed = await installClientHooks(context.cwd, paths);
      context.out.result(
        [
          `${installed.updated ? 'Updated' : 'Installed'} ${installed.hook}.`,
          ...(installed.chained ? [`The hook that was there before runs first: ${installed.chained}.`] : []),
        ],
        { hook: installed.hook, chained: installed.chained ?? null, updated: installed.updated },
      );
      return 0;
    }
    const installed = await installServerHooks(context.cwd, paths, {
      ...(values.branch !== undefined ? { branch: values.branch } : {}),
      ...(values['require-proof'] ? { requireProof: true } : values['no-require-proof'] ? { requireProof: false } : {}),
      store: storeFromEnv(context.env, context.cwd),
      ...(values.skew !== undefined ? { skewSeconds: parseSkewSeconds(values.skew) } : {}),
      ...parsePushers(values['pusher-variable'], values.pusher ?? []),
      path: context.env.PATH ?? '/usr/bin:/bin',
    });
    context.out.result(
      [
        `${installed.updated ? 'Updated' : 'Installed'} ${installed.hook}.`,
        ...(installed.chained ? [`The hook that was there before runs first: ${installed.chained}.`] : []),
        `Pinned settings (${installed.settingsFile}):`,
        ...describeServerSettings(installed.settings).map(line => `  ${line}`),
        'A push never changes these settings; after a change of .lockstep.json, run lockstep hooks install --server again.',
        ...(installed.settings.requireProof
          ? []
          : ['Warning: proofs are not required, so protected branches are not fenced here (serverGuard is false).']),
      ],
      {
        hook: installed.hook,
        chained: installed.chained ?? null,
        updated: installed.updated,
        settingsFile: installed.settingsFile,
        pinned: describeServerSettings(installed.settings),
      },
    );
    return 0;
  },
};

export const hooksStatusCommand: Command = {
  name: 'hooks status',
  summary: 'with --server, in the shared bare repository: the settings the server guard decides with',
  help: `usage: lockstep hooks status --server

In the shared bare repository: prints the settings the pre-receive guard decides with (never a
password or a token), or says that no server guard is installed. Warns when the pinned branch's
.lockstep.json now differs from them (JSON: stale, the warning, or null): run the install again.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { server: { type: 'boolean' } });
    if (!values.server)
      throw new LockConfigurationError('hooks status needs --server (in the shared bare repository).', { setting: '--server' });
    if (!(await isBareRepository(context.cwd))) {
      throw new LockConfigurationError('hooks status --server belongs in the shared bare repository (the remote).', {
        setting: '--server',
      });
    }
    const settings = await readServerSettings(context.cwd);
    if (settings === undefined) {
      context.out.result('No server guard is installed here (no hooks/lockstep-server.json): run lockstep hooks install --server.', {
        installed: false,
      });
      return 0;
    }
    const lines = describeServerSettings(settings);
    const stale = await pinnedDriftWarning(gitIn(context.cwd), settings);
    context.out.result([...lines, ...(stale ? [`warning: ${stale}`] : [])], { installed: true, pinned: lines, stale: stale ?? null });
    return 0;
  },
};

/** The store details of the installer's environment the guard keeps (files made absolute: the guard runs elsewhere). */
function storeFromEnv(env: NodeJS.ProcessEnv, cwd: string): ServerStore {
  const file = (value: string | undefined) => (value ? path.resolve(cwd, value) : undefined);
  const store: Record<string, string | undefined> = {
    path: env.LOCKSTEP_PATH || undefined,
    redisUrl: env.LOCKSTEP_REDIS_URL || undefined,
    databaseUrl: env.LOCKSTEP_DATABASE_URL || undefined,
    etcdEndpoints: env.LOCKSTEP_ETCD_ENDPOINTS || undefined,
    etcdCaFile: file(env.LOCKSTEP_ETCD_CA_FILE),
    etcdCertFile: file(env.LOCKSTEP_ETCD_CERT_FILE),
    etcdKeyFile: file(env.LOCKSTEP_ETCD_KEY_FILE),
  };
  return Object.fromEntries(Object.entries(store).filter(([, value]) => value !== undefined));
}

/** `hooks install --server --skew S`: whole seconds, 0–3600. */
export function parseSkewSeconds(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 3600)
    throw new LockConfigurationError('--skew must be a whole number of seconds from 0 to 3600.', { setting: '--skew' });
  return n;
}

/** `--pusher-variable V --pusher USER=IDENTITY …`: V one of PUSHER_VARIABLES, each pair with both sides non-empty. */
export function parsePushers(
  variable: string | undefined,
  pairs: readonly string[],
): { pushers?: { variable: PusherVariable; identities: Record<string, string> } } {
  if (variable === undefined) {
    if (pairs.length > 0)
      throw new LockConfigurationError('--pusher needs --pusher-variable (which variable your git server sets).', { setting: '--pusher' });
    return {};
  }
  if (!(PUSHER_VARIABLES as readonly string[]).includes(variable)) {
    throw new LockConfigurationError(`--pusher-variable must be one of ${PUSHER_VARIABLES.join(', ')}.`, { setting: '--pusher-variable' });
  }
  const identities: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1)
      throw new LockConfigurationError('--pusher takes USER=IDENTITY, e.g. --pusher alice=alice@example.com.', { setting: '--pusher' });
    identities[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { pushers: { variable: variable as PusherVariable, identities } };
}
