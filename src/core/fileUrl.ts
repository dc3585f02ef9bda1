import { fileURLToPath } from 'node:url';

/**
 * Local paths named by URLs, read as the platform reads them. On Windows `file:///C:/srv/repo.git`
 * is `C:\srv\repo.git` and `file://server/share/repo.git` the UNC path `\\server\share\repo.git`;
 * taking the URL's pathname instead gives `/C:/srv/repo.git`, which names nothing there.
 * `platform` is a parameter so that tests can read URLs as Windows does.
 */

/** The path a `file:` URL names; undefined when it names none on this platform (another host on POSIX, no drive on Windows). */
export function pathOfFileUrl(url: string, platform: NodeJS.Platform = process.platform): string | undefined {
  try {
    return fileURLToPath(url, { windows: platform === 'win32' });
  } catch {
    return undefined;
  }
}

/** `C:…`: on Windows a local path, though its colon comes before any slash (git's has_dos_drive_prefix). */
export function hasDosDrivePrefix(text: string): boolean {
  return /^[A-Za-z]:/.test(text);
}
