import { gitBoolean } from '../gitBoolean';
import { recurseMode, signMode, type PushCommandLine, type RecurseMode, type SignMode } from './pushCommandLine';

/**
 * Would this push hand the live proof of grant to someone other than the shared remote? The proof
 * travels as a push option from the clone's `push.pushOption` configuration, and git sends those
 * options to whatever it pushes to. The client guard runs before git sends them (for the push it
 * guards), so it can stop a push to another repository — another remote, or the shared remote's
 * name redirected by `pushurl` or `pushInsteadOf` — and a signed push, whose certificate the remote
 * stores as an object. Settings and options are read as git reads them (every boolean spelling,
 * abbreviated options). Pure: what the hook saw in, a refusal (one sentence and what to do) out.
 */

export interface PushSeen {
  /** The hook's first argument: the remote's name, or the URL when the push named none. */
  readonly remoteName: string;
  /** The hook's second argument: the URL git pushes to in this run (pushurl and pushInsteadOf applied). */
  readonly pushUrl: string;
  /** The container's shared remote (its name). */
  readonly sharedRemote: string;
  /** The URL(s) the shared remote is fetched from, as git resolves them (insteadOf applied, pushInsteadOf not). */
  readonly sharedUrls: readonly string[];
  /** Settings git reads for this push, in git's order: [lower-case key, value, or null for a key without `=`]. */
  readonly config: readonly (readonly [string, string | null])[];
  /** The push's command line as git reads it; undefined when the system does not show it. */
  readonly commandLine: PushCommandLine | undefined;
}

/** Applies git's rule for multi-valued push options: an empty value clears the list so far. */
export function effectiveOptions(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (value === '') out.length = 0;
    else out.push(value);
  }
  return out;
}

function values(seen: Pick<PushSeen, 'config'>, key: string): (string | null)[] {
  return seen.config.filter(([k]) => k === key).map(([, v]) => v);
}

/** The push options git sends: those on the command line when there are any, else the configured ones. */
export function optionsSent(seen: Pick<PushSeen, 'config' | 'commandLine'>): string[] {
  const typed = seen.commandLine?.pushOptions ?? [];
  if (typed.length > 0) return [...typed];
  return effectiveOptions(values(seen, 'push.pushoption').filter((v): v is string => v !== null));
}

export function carriesProof(seen: Pick<PushSeen, 'config' | 'commandLine'>): boolean {
  return optionsSent(seen).some(o => o.startsWith('lockstep-proof='));
}

/** The proofs this push would send (the liveness check compares them with the page; the grant beside them is public). */
export function proofsSent(seen: Pick<PushSeen, 'config' | 'commandLine'>): string[] {
  return optionsSent(seen)
    .filter(o => o.startsWith('lockstep-proof='))
    .map(o => o.slice('lockstep-proof='.length));
}

/** Whether git pushes to the repository the shared remote is fetched from. */
export function goesToSharedRemote(seen: Pick<PushSeen, 'pushUrl' | 'sharedUrls'>): boolean {
  return seen.pushUrl !== '' && seen.sharedUrls.includes(seen.pushUrl);
}

/** Signed: `--signed`/`--no-signed` on the command line, else the last `push.gpgSign`. A value git refuses counts as signed. */
function signing(seen: PushSeen): SignMode {
  if (seen.commandLine?.signed !== undefined) return seen.commandLine.signed;
  const configured = values(seen, 'push.gpgsign');
  return configured.length === 0 ? 'never' : signMode(configured[configured.length - 1]);
}

/** Recursion: `push.recurseSubmodules` and `submodule.recurse` in git's order (the last wins), then the command line. */
function recursion(seen: PushSeen): RecurseMode {
  if (seen.commandLine?.recurseSubmodules !== undefined) return seen.commandLine.recurseSubmodules;
  let mode: RecurseMode = 'off';
  for (const [key, value] of seen.config) {
    if (key === 'push.recursesubmodules') mode = recurseMode(value);
    if (key === 'submodule.recurse') {
      const on = gitBoolean(value);
      mode = on === undefined ? 'invalid' : on ? 'on-demand' : 'off';
    }
  }
  return mode;
}

/** A remote's name as it may be printed: a URL (which may hold a credential) is never repeated. */
function printable(name: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name) ? name : undefined;
}

export function checkProofLeak(seen: PushSeen): string | undefined {
  if (!carriesProof(seen)) return undefined;
  if (!goesToSharedRemote(seen)) {
    const name = printable(seen.remoteName);
    if (name !== undefined && name === seen.sharedRemote) {
      return (
        `This push of ${name} goes to another URL than the one ${name} is fetched from (remote.${name}.pushurl or a url.*.pushInsteadOf setting), not to the container's shared remote, and would hand that repository the proof of your lock. ` +
        `Push there without it: git -c push.pushOption= push ${name} …; to land, push to the URL ${name} is fetched from.`
      );
    }
    if (name === undefined) {
      return "This push goes to a URL that is not the container's shared remote (the URL is not repeated here: it may hold a credential), and would hand it the proof of your lock. Push there without it: git -c push.pushOption= push URL …";
    }
    return `This push goes to ${name}, not the container's shared remote, and would hand it the proof of your lock. Push there without it: git -c push.pushOption= push ${name} …`;
  }
  const doubtful = seen.commandLine?.doubtful ?? [];
  if (doubtful.length > 0) {
    const option = doubtful[0].replace(/[^\x21-\x7e]/g, '?').slice(0, 60);
    return `Lockstep cannot tell which option ${option} abbreviates, and it may sign the push or hand its options, with the proof of your lock, to submodules. Spell the option out in full and push again.`;
  }
  if (signing(seen) !== 'never') {
    return "A signed push stores its push options, and so the proof of your lock, in the remote's push certificate. Push unsigned while you hold the lock: git push --no-signed …";
  }
  const recurse = recursion(seen);
  if (recurse === 'on-demand' || recurse === 'only' || recurse === 'invalid') {
    return (
      "git hands the push options of a push that recurses into submodules (--recurse-submodules=on-demand or only, or submodule.recurse) to the submodules' pushes, on their command lines: the proof of your lock would reach the submodules' remotes. " +
      'Push submodules on their own, then push this with --no-recurse-submodules.'
    );
  }
  return undefined;
}
