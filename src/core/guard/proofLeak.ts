/**
 * Would this push hand the live proof of grant to someone other than the shared remote? The proof
 * travels as a push option from the clone's `push.pushOption` configuration, and git sends those
 * options to whatever it pushes to. The client guard runs before git sends them (for the push it
 * guards), so it can stop a push to another remote and a signed push, whose certificate the remote
 * stores as an object. Pure: what the hook saw in, a refusal (one sentence and what to do) out.
 */

export interface PushSeen {
  /** The push goes to the container's shared remote. */
  readonly sharedRemote: boolean;
  readonly remoteName: string;
  /** `push.pushOption` values as git resolves them for this push (the hook's view of the configuration). */
  readonly configuredOptions: readonly string[];
  /** The arguments of the `git push` that runs the hook, when the system shows them (empty otherwise). */
  readonly pushArgs: readonly string[];
  /** `push.gpgSign` as configured ('' when unset). */
  readonly gpgSign: string;
  /** `push.recurseSubmodules` as configured ('' when unset). */
  readonly recurseSubmodules: string;
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

export function carriesProof(seen: PushSeen): boolean {
  // Options given on the command line (-o / --push-option) replace the configured ones entirely.
  if (seen.pushArgs.some(a => a === '-o' || a.startsWith('--push-option') || /^-o./.test(a))) return false;
  return effectiveOptions(seen.configuredOptions).some(o => o.startsWith('lockstep-proof='));
}

function signs(seen: PushSeen): boolean {
  let signed = ['true', 'if-asked'].includes(seen.gpgSign.trim().toLowerCase());
  for (const arg of seen.pushArgs) {
    if (arg === '--signed' || arg === '--signed=true' || arg === '--signed=yes' || arg === '--signed=if-asked') signed = true;
    if (arg === '--no-signed' || arg === '--signed=false' || arg === '--signed=no') signed = false;
  }
  return signed;
}

function recurses(seen: PushSeen): boolean {
  let mode = seen.recurseSubmodules.trim().toLowerCase();
  for (const arg of seen.pushArgs) {
    if (arg.startsWith('--recurse-submodules=')) mode = arg.slice('--recurse-submodules='.length);
    if (arg === '--no-recurse-submodules') mode = 'no';
  }
  return mode === 'on-demand' || mode === 'only';
}

export function checkProofLeak(seen: PushSeen): string | undefined {
  if (!carriesProof(seen)) return undefined;
  const name = seen.remoteName.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  if (!seen.sharedRemote) {
    return `This push goes to ${name}, not the container's shared remote, and would hand it the proof of your lock. Push there without it: git -c push.pushOption= push ${name} …`;
  }
  if (signs(seen)) {
    return 'A signed push stores its push options, and so the proof of your lock, in the remote\'s push certificate. Push unsigned while you hold the lock: git push --no-signed …';
  }
  if (recurses(seen)) {
    return 'git hands the push options of a push with --recurse-submodules=on-demand to the submodules\' pushes, on their command lines, before any hook runs: the proof of your lock may already have reached the submodules\' remotes. Push submodules on their own, release, and acquire again for a fresh proof.';
  }
  return undefined;
}
