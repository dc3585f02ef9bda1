import type { PushSeen } from '../../src/core/guard/proofLeak';
import { parsePushArguments } from '../../src/core/guard/pushCommandLine';

/** The proof of grant as a clone's git config carries it (`push.pushoption`), for the client guard's leak check. */
export const PROOF: [string, string][] = [
  ['push.pushoption', 'lockstep-grant=3'],
  ['push.pushoption', `lockstep-proof=${'a'.repeat(64)}`],
];

/** What the pre-push guard sees of a plain `git push origin main` to the shared remote, with `extra` over it. */
export const seen = (extra: Partial<PushSeen> = {}): PushSeen => ({
  remoteName: 'origin',
  pushUrl: 'git://shared/x.git',
  sharedRemote: 'origin',
  sharedUrls: ['git://shared/x.git'],
  config: PROOF,
  commandLine: parsePushArguments(['origin', 'main']),
  ...extra,
});

/** A push command line as the guard reads it. */
export const line = (...args: string[]) => ({ commandLine: parsePushArguments(args) });
