import * as fs from 'node:fs';
import * as path from 'node:path';
import { hasDosDrivePrefix, pathOfFileUrl } from '../fileUrl';
import { LockConfigurationError } from '../errors';
import { ALLOWED_PROTOCOLS, type GitCommand } from '../git/runner';
import { configuredUrls, isPlainRemoteName, type SettingEntry } from '../git/cloneSettings';

/**
 * The shared remote named by `.lockstep.json` (`remote`, and `gitRemote` for the git driver), as
 * this clone resolves it. A committed value is only ever a *name*: what it names is the clone's
 * own configuration (`git remote add`), which a commit cannot change. So a committed file cannot
 * point the clone at a repository it carries in its own work tree (whose hooks would run as the
 * teammate on every write), at a command (`ext::`), or at an option (`--upload-pack`).
 *
 * Refused, with a configuration error (exit 2): a value that is not a plain remote name, a name
 * that is not a remote of this clone, and a remote whose fetch or push URL (after `insteadOf` and
 * `pushInsteadOf`) uses another transport than file, git, ssh, http or https, or is a path inside
 * the clone's work tree.
 */
export interface SharedRemote {
  readonly name: string;
  /** Fetch and push URLs as git uses them (insteadOf applied). Not for printing: they may hold credentials. */
  readonly urls: readonly string[];
  /** The transports those URLs use (a subset of ALLOWED_PROTOCOLS). */
  readonly protocols: readonly string[];
}

/**
 * `settings`: the clone's settings as already read (cloneSettings.ts); where they answer for certain,
 * git is not asked again (configuredUrls).
 */
export async function resolveSharedRemote(
  git: GitCommand,
  root: string,
  name: string,
  setting: 'remote' | 'gitRemote',
  settings: readonly SettingEntry[] = [],
): Promise<SharedRemote> {
  const refuse = (what: string): never => {
    throw new LockConfigurationError(`.lockstep.json: ${setting} ${what}`, { setting });
  };
  if (!isPlainRemoteName(name)) {
    refuse(
      "must be the name of one of this clone's remotes, such as origin (never a path, a URL or an option); fix .lockstep.json, or pull the fixed file.",
    );
  }
  // The fetch and push URLs as git prints them: from the settings already read where they are certain, else from git.
  const configured = configuredUrls(settings, name);
  const [fetchUrls, pushUrls] = configured
    ? [lines(configured.fetch.join('\n')), lines(configured.push.join('\n'))]
    : (
        await Promise.all(
          [false, true].map(push => git.run(['remote', 'get-url', '--all', ...(push ? ['--push'] : []), '--end-of-options', name])),
        )
      ).map(asked => (asked.code === 0 ? lines(asked.stdout.toString('utf8')) : undefined));
  if (fetchUrls === undefined || pushUrls === undefined) {
    const remotes = (await git.raw(['remote']).catch(() => ''))
      .split('\n')
      .map(r => r.trim())
      .filter(r => r !== '');
    refuse(
      `names no remote of this clone (it has ${remotes.length === 0 ? 'none' : remotes.join(', ')}). The shared remote is a remote of each clone: ` +
        'add it with `git remote add NAME URL`, or fix .lockstep.json.',
    );
  }
  const urls = [...new Set([...(fetchUrls ?? []), ...(pushUrls ?? [])])];
  if (urls.length === 0) refuse('names a remote of this clone that has no URL; set it with `git remote set-url`.');
  const protocols = new Set<string>();
  const work = realPath(root);
  for (const url of urls) {
    const where = transportOf(url);
    if (where === undefined || !ALLOWED_PROTOCOLS.includes(where.protocol)) {
      refuse(
        'names a remote whose URL uses a transport Lockstep does not talk to: the shared remote is reached over file, git, ssh, http or https' +
          ' (never ext:: or another helper that runs a command). Point the remote at such a URL (`git remote set-url`).',
      );
    }
    if (where!.path !== undefined) {
      const target = realPath(path.resolve(root, where!.path));
      if (target === work || target.startsWith(work.endsWith(path.sep) ? work : work + path.sep)) {
        refuse(
          "names a remote inside this clone's own work tree: the shared remote is the team's repository, never one carried in the work tree" +
            ' (its hooks would run on every write). Point the remote at the shared repository (`git remote set-url`).',
        );
      }
    }
    protocols.add(where!.protocol);
  }
  return { name, urls, protocols: [...protocols] };
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map(l => l.trim())
    .filter(l => l !== '');
}

/**
 * How git reaches a URL (its rules in connect.c/transport.c): `helper::address` is a remote helper,
 * `scheme://` a URL, `[user@]host:path` (a colon before any slash) ssh, anything else a local path
 * (on Windows also `C:/…` and `C:\…`, which git reads as a drive). A `file://` URL's path is read as
 * the platform reads it (fileUrl.ts).
 */
export function transportOf(url: string, platform: NodeJS.Platform = process.platform): { protocol: string; path?: string } | undefined {
  const helper = /^([A-Za-z0-9][A-Za-z0-9+.-]*)::/.exec(url);
  if (helper) return { protocol: helper[1].toLowerCase() === 'ext' ? 'ext' : `${helper[1].toLowerCase()}::` };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name === 'file') {
      const local = pathOfFileUrl(url, platform);
      return local === undefined ? undefined : { protocol: 'file', path: local };
    }
    if (name === 'git+ssh' || name === 'ssh+git') return { protocol: 'ssh' };
    return { protocol: name };
  }
  if (platform === 'win32' && hasDosDrivePrefix(url)) return { protocol: 'file', path: url };
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) return { protocol: 'ssh' };
  return { protocol: 'file', path: url };
}

/** The real path of `file`, or of its nearest existing folder joined with the rest (git tries `X` and `X.git`). */
function realPath(file: string): string {
  let rest = '';
  let at = path.resolve(file);
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), rest);
    } catch {
      const parent = path.dirname(at);
      if (parent === at) return path.join(at, rest);
      rest = path.join(path.basename(at), rest);
      at = parent;
    }
  }
}
