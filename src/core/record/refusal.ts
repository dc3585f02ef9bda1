import type { RefusalReason } from '../errors';
import type { NextStep } from './turns';

/**
 * Why a transition refused a request, as data: the reason code users see (`reason` in the CLI's
 * JSON, {@link RefusalReason}) and the facts behind it (grant numbers, identities, times, limits).
 * Where one code covers several cases (`invalid-request`, `not-holder`, …), `what` tells them apart.
 * refusalText.ts is the one place these become words; the transitions never write text of their own.
 */
export type Refusal =
  | { readonly reason: 'invalid-request'; readonly what: 'identity'; readonly maxLength: number }
  | { readonly reason: 'invalid-request'; readonly what: 'ttl'; readonly minMs: number; readonly maxMs: number }
  | { readonly reason: 'invalid-request'; readonly what: 'landed-commit' }
  | { readonly reason: 'invalid-request'; readonly what: 'landing' }
  | { readonly reason: 'invalid-request'; readonly what: 'id-count'; readonly max: number }
  | { readonly reason: 'invalid-request'; readonly what: 'block-text' }
  | { readonly reason: 'invalid-request'; readonly what: 'no-such-block'; readonly block: number }
  | { readonly reason: 'invalid-request'; readonly what: 'adopt-floors' }
  | { readonly reason: 'already-holder'; readonly grant: number }
  | {
      readonly reason: 'held-by-other';
      readonly holder: string;
      readonly grant: number;
      readonly until: number;
      readonly next: NextStep;
    }
  /** `turn`: whose window runs now (undefined: the queue head's), until `until`. */
  | { readonly reason: 'not-your-turn'; readonly turn: string | undefined; readonly until: number; readonly next: NextStep }
  | { readonly reason: 'holder-cannot-petition' }
  /** `next` is undefined when the container's settings were not given. */
  | { readonly reason: 'already-queued'; readonly position: number; readonly next: NextStep | undefined }
  | { readonly reason: 'not-queued' }
  /** Only the lead leases identifiers (`lease-ids`) and assigns blocks (`assign`). */
  | { readonly reason: 'not-holder'; readonly what: 'lease-ids' | 'assign'; readonly next: NextStep }
  | { readonly reason: 'not-holder'; readonly what: 'done'; readonly block: number; readonly assignee: string }
  /** A guard refused a push; `detail` is its words, already cleaned. */
  | { readonly reason: 'not-holder'; readonly what: 'push'; readonly detail: string }
  | { readonly reason: 'no-range' }
  | { readonly reason: 'range-exhausted' }
  | { readonly reason: 'new-identity'; readonly identity: string }
  | { readonly reason: 'not-operator'; readonly what: 'clear' | 'adopt'; readonly identity: string }
  | { readonly reason: 'reason-required'; readonly what: 'clear' | 'adopt' }
  /** `holder` null: the lock is free; else its live holder and when the lease ends. */
  | { readonly reason: 'not-silent'; readonly holder: { readonly identity: string; readonly until: number } | null };
