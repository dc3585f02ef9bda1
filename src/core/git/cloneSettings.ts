import type { GitCommand } from './runner';

/**
 * The clone's git settings that opening a container reads — who you are, the remotes' URLs and the
 * URL rewrites that apply to them — in ONE git run (`git config --get-regexp`) instead of one per
 * question: every command and both hooks open a container, and each git process is a wait the user
 * pays on every push. A caller with more keys to read (the pre-push guard's push settings) asks
 * them in the same run ({@link readCloneSettings}'s `extra`) and hands the answer to the opening.
 */

/** One setting as git lists it: [key (section and name lower case, a subsection as written), value, or null for a key without "="]. */
export type SettingEntry = readonly [key: string, value: string | null];

/** The keys opening a container reads (extended regular expressions, as `git config --get-regexp` takes them). */
const OPEN_KEYS = ['user\\.email', 'remote\\..*\\.(url|pushurl)', 'url\\..*\\.(insteadof|pushinsteadof)'];

/**
 * The settings opening a container reads, and those matching `extra` (alternatives of an extended regular
 * expression), as git resolves them for this repository (includes followed, `git -c` included), in git's
 * order, in one git run. Where none match or git fails: none (each reader then decides as for an unset key).
 */
export async function readCloneSettings(git: GitCommand, extra: readonly string[] = []): Promise<SettingEntry[]> {
  const out = await git.raw(['config', '-z', '--get-regexp', `^(${[...OPEN_KEYS, ...extra].join('|')})$`]).catch(() => '');
  const entries: SettingEntry[] = [];
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const newline = entry.indexOf('\n');
    // A key without "=value" (`[push] gpgSign`) is listed without a newline: git reads it as true.
    entries.push(newline < 0 ? [entry, null] : [entry.slice(0, newline), entry.slice(newline + 1)]);
  }
  return entries;
}

/** The value `git config --get KEY` prints: the last one set (a key without "=" reads ''); undefined when unset. */
export function lastSetting(settings: readonly SettingEntry[], key: string): string | undefined {
  for (let i = settings.length - 1; i >= 0; i--) if (settings[i][0] === key) return settings[i][1] ?? '';
  return undefined;
}

/** A plain remote name, which git looks up as written: never a path, a URL or an option. */
export function isPlainRemoteName(name: string): boolean {
  return typeof name === 'string' && /^[A-Za-z0-9._-]+$/.test(name) && !name.startsWith('-') && name !== '.' && name !== '..';
}

/**
 * The URLs `git remote get-url --all` (`fetch`) and `git remote get-url --all --push` (`push`) print
 * for remote `name`, read from the settings — only where that reading is certain: the name is a
 * plain remote name, the remote has URLs in the configuration (not only in a legacy
 * `.git/remotes/` file), none of them empty or without a value, and no `url.*.insteadOf` or
 * `pushInsteadOf` is set (git would rewrite them). Otherwise undefined, and git is asked.
 */
export function configuredUrls(settings: readonly SettingEntry[], name: string): { fetch: string[]; push: string[] } | undefined {
  if (!isPlainRemoteName(name)) return undefined;
  const fetch: string[] = [];
  const push: string[] = [];
  for (const [key, value] of settings) {
    if (key.startsWith('url.') && (key.endsWith('.insteadof') || key.endsWith('.pushinsteadof'))) return undefined;
    const list = key === `remote.${name}.url` ? fetch : key === `remote.${name}.pushurl` ? push : undefined;
    if (list === undefined) continue;
    if (value === null || value === '' || value.includes('\n')) return undefined;
    list.push(value);
  }
  if (fetch.length === 0) return undefined;
  return { fetch, push: push.length > 0 ? push : fetch };
}
