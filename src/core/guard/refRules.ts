import { keyDigest, namespaceDigest } from '../names';
import { DEFAULT_PREFIX } from '../config';
import type { ServerSettings } from './serverSettings';

/**
 * Which rule the server's guard applies to one pushed ref. Pure: the pinned settings and the ref
 * names in, a rule out. A ref that the server resolves to another (a symbolic ref such as
 * `refs/heads/trunk → refs/heads/main`) is judged by both names, so an alias of a protected branch
 * is protected too. On a server whose refs live on a case-insensitive filesystem (macOS, Windows:
 * git sets `core.ignorecase`), `refs/heads/Main` is the file of `refs/heads/main`, so names are
 * compared as that filesystem compares them.
 */

export const ZERO_SHA = /^0+$/;

export interface RefUpdate {
  readonly oldSha: string;
  readonly newSha: string;
  /** The ref name as pushed. */
  readonly ref: string;
  /** Where the server's symbolic refs lead that name (the name itself when it is not symbolic). */
  readonly target: string;
}

export type RefRule =
  /** Not Lockstep's business. */
  | { readonly kind: 'pass' }
  /** A protected branch: creating, moving (also by force) and deleting it need the live grant. */
  | { readonly kind: 'branch'; readonly branch: string }
  /** The container's lock record (git driver): only a legal transition. */
  | { readonly kind: 'record' }
  /** A plain lease of the container's namespace (git driver): counter rules. */
  | { readonly kind: 'lease' }
  | { readonly kind: 'refuse'; readonly why: string };

const LOCK_ROOT = 'refs/lockstep/';

/** The ref of the container's lock record in the git driver's layout (see stores/git/gitRefs.ts). */
export function recordRefOf(settings: ServerSettings): string {
  const prefix = settings.file.prefix ?? DEFAULT_PREFIX;
  return `${LOCK_ROOT}${namespaceDigest(prefix)}/records/${keyDigest(prefix, `container:${settings.file.container}`)}`;
}

/** How the server's filesystem compares ref names: `foldsCase` when `core.ignorecase` is true in the bare repository. */
export interface RefNaming {
  readonly foldsCase: boolean;
}

export function ruleFor(settings: ServerSettings, update: RefUpdate, naming: RefNaming = { foldsCase: false }): RefRule {
  const fold = (name: string) => (naming.foldsCase ? name.toLowerCase() : name);
  for (const name of new Set([update.ref, update.target])) {
    const branch = settings.file.protectedBranches.find(b => fold(`refs/heads/${b}`) === fold(name));
    if (branch !== undefined) return { kind: 'branch', branch };
  }
  if (naming.foldsCase) {
    // Lock refs are all lower case: another spelling would write the same file by a name no rule below knows.
    for (const name of [update.ref, update.target]) {
      if (name.toLowerCase().startsWith(LOCK_ROOT) && name !== name.toLowerCase())
        return {
          kind: 'refuse',
          why: `${update.ref} differs from a lock ref only in case, which this server's filesystem ignores; lock refs are updated only by their own name.`,
        };
    }
  }
  if (update.target !== update.ref && update.target.startsWith(LOCK_ROOT)) {
    return { kind: 'refuse', why: `${update.ref} is a symbolic ref to a lock ref; lock refs are updated only by their own name.` };
  }
  if (!update.ref.startsWith(LOCK_ROOT) || settings.file.driver !== 'git') return { kind: 'pass' };

  if (ZERO_SHA.test(update.newSha))
    return { kind: 'refuse', why: 'lock refs are never deleted by a push (that would reset the grant or the fencing counter).' };
  if (update.ref === recordRefOf(settings)) return { kind: 'record' };
  const namespace = `${LOCK_ROOT}${namespaceDigest(settings.file.prefix ?? DEFAULT_PREFIX)}/leases/`;
  if (update.ref.startsWith(namespace) && /^[0-9a-f]{64}$/.test(update.ref.slice(namespace.length))) return { kind: 'lease' };
  return { kind: 'refuse', why: "this remote keeps only its own container's lock refs, and this ref is not one of them." };
}
