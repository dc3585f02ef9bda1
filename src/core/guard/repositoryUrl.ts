import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Whether a push's URL names the same repository as one of the shared remote's URLs, however it is spelt: the client
 * guard fences pushes to the shared remote, and `git push file:///srv/team.git`, `git push ../team.git` or a second
 * remote whose URL ends in a slash reach the same repository as `origin`. Without this a push that names the shared
 * repository another way would pass unfenced (the server guard, where installed, still refuses it).
 *
 * Local repositories (a path, absolute or relative to `cwd`, or a `file://` URL) compare by the folder git would open:
 * the real path, with git's own `.git` suffix and a work tree's `.git` folder tried as git tries them. Other URLs
 * compare by their text without trailing slashes and a trailing `.git`. A URL that cannot be read this way is another
 * repository, as before.
 */
export function sameRepository(url: string, sharedUrls: readonly string[], cwd: string): boolean {
  const key = repositoryKey(url, cwd);
  return key !== undefined && sharedUrls.some(shared => repositoryKey(shared, cwd) === key);
}

function repositoryKey(url: string, cwd: string): string | undefined {
  const trimmed = url.trim();
  if (trimmed === '') return undefined;
  const local = localPath(trimmed, cwd);
  if (local !== undefined) return `local:${repositoryFolder(local)}`;
  return `url:${trimmed
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '')}`;
}

/** The path of a local repository URL, or undefined for a URL of another transport (scheme://, or scp-like host:path). */
function localPath(url: string, cwd: string): string | undefined {
  if (/^file:\/\//i.test(url)) {
    try {
      return fileURLToPath(url);
    } catch {
      return undefined;
    }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) return undefined;
  // git reads `host:path` as ssh unless a slash comes before the colon (or it is a Windows drive letter).
  const colon = url.indexOf(':');
  const slash = url.search(/[\\/]/);
  if (colon > 0 && (slash === -1 || colon < slash) && !/^[A-Za-z]:[\\/]/.test(url)) return undefined;
  return path.resolve(cwd, url);
}

/** The folder git opens for a local repository path: as given, else with `.git` appended; a work tree's `.git` inside it. */
function repositoryFolder(given: string): string {
  for (const candidate of [given, `${given}.git`]) {
    const real = realFolder(candidate);
    if (real === undefined) continue;
    return realFolder(path.join(real, '.git')) ?? real;
  }
  return path.resolve(given).replace(/[\\/]+$/, '');
}

function realFolder(candidate: string): string | undefined {
  try {
    const real = fs.realpathSync.native(candidate);
    return fs.statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}
