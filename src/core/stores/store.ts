/**
 * What a driver is: two small primitives and nothing more (docs/leases.md#drivers). Keys are always hex digests
 * made by `names.ts`; a driver never sees a lock name, an owner token (only its hash) or a grant rule.
 */

import type { DriverName } from '../config';
import type { AuditLine } from '../lockRecord';
import type { WatchFreshness, WatchInterest } from './pollPace';

/** What a watcher tells a polling watch about its window (the pace rule is pollPace.ts, the drivers' own). */
export type { WatchFreshness, WatchInterest };

export type ClaimResult =
  | { readonly claimed: true; readonly fencingToken: number; readonly expiresAt: number }
  | { readonly claimed: false };

/** `released`: this owner removed its live lease. `expired`/`absent`: nothing live to remove. */
export type ReleaseResult = 'released' | 'expired' | 'absent' | 'other-owner';

/** Plain leases (docs/leases.md#handles): claim / extend / release of one key with its TTL and a per-key counter. */
export interface LeaseStore {
  /**
   * Claims `key` for `ownerHash` when it is free or expired at `now`, and issues the next fencing
   * token for the key: strictly greater than every token issued for it before, release and crash included.
   */
  claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult>;
  /** Extends a live lease of this owner to `now + ttlMs`; false when it is not live or not ours. */
  extend(key: string, ownerHash: string, ttlMs: number, now: number): Promise<boolean>;
  /** Removes this owner's lease; says what was there. Leaves another owner's live lease intact. */
  release(key: string, ownerHash: string, now: number): Promise<ReleaseResult>;
}

export interface VersionedRecord {
  /** The stored JSON value, parsed; its shape is checked by core, not by the store. */
  readonly value: unknown;
  /** Opaque revision, changes with every successful write. */
  readonly revision: string;
}

export type CasResult = { readonly ok: true; readonly revision: string } | { readonly ok: false };

export interface CasMeta {
  /** One line describing the transition (the git driver's commit message). No tokens. */
  readonly summary: string;
}

export interface Disposable {
  dispose(): void;
}

/** How a push watch hears of changes, as the badge's tooltip names it ("live: pub/sub"). */
export type LiveChannel = 'pub/sub' | 'file watch' | 'etcd watch';

/** What the watcher tells a watch: whether this window needs news fast (a polling watch), and who hears of a push watch's health. */
export interface WatchOptions {
  /** Asked before each poll; a watch without it polls at its idle pace. */
  readonly interest?: () => WatchInterest;
  /**
   * A push watch's path went down (`false`: events may be lost until it is back) or is up again
   * (`true`: subscribed or watching again). Each call is followed by one `onChange`, so the owner
   * reads once on every loss and every (re)subscription, and needs no periodic read while it is up.
   */
  readonly onHealth?: (healthy: boolean) => void;
}

/** A push watch's path (Redis pub/sub, the file driver's file-system watch, an etcd watch) and whether it is up now. */
export interface LiveWatch {
  readonly via: LiveChannel;
  readonly healthy: boolean;
  /** Down, it comes back by itself (Redis reconnects and subscribes again); else its owner starts a new watch. */
  readonly recovers: boolean;
}

/** A watch's handle. The optional members are a polling watch's (git); push watches have none. */
export interface Watch extends Disposable {
  /** The interest changed (joined the queue, the user asked): decide the next poll again now. */
  nudge?(): void;
  /** How stale a change can be before this watch reports it: idle, and while the window is active. */
  readonly freshness?: WatchFreshness;
  /**
   * Changes arrive as events (PostgreSQL NOTIFY) and `freshness` is the bound of the poll that backs
   * them up: a change is heard at once, or within that bound when its event was lost.
   */
  readonly announced?: boolean;
  /** A push watch (Redis, file): its path and health; while healthy every change arrives as an event. */
  readonly live?: LiveWatch;
}

/** The container record's primitive: read with a revision, write only against that revision. */
export interface RecordStore {
  read(key: string): Promise<VersionedRecord | null>;
  /** Writes `next` if the stored revision is still `expectedRevision` (null: no record yet). */
  compareAndSwap(key: string, expectedRevision: string | null, next: unknown, meta: CasMeta): Promise<CasResult>;
  /** Calls `onChange` (at least once) after the record may have changed elsewhere. Optional. */
  watch?(key: string, onChange: () => void, options?: WatchOptions): Watch;
}

/** One write of a record as a store with history keeps it (the git driver: one commit per write). */
export interface HistoryEntry {
  readonly revision: string;
  readonly time: number;
  readonly author: string;
  readonly summary: string;
  /** The write's audit line, as its record holds it (container records). */
  readonly line?: AuditLine;
}

/** What a driver's backend is made of, as far as it can see (`lockstep status`, `doctor`). */
export interface DeploymentInfo {
  /** `redis-standalone`, `redis-sentinel`, `redis-cluster`, `etcd`. */
  readonly kind: string;
  /** Masters holding data (a cluster's shards; 1 otherwise). */
  readonly masters: number;
  /** Replicas seen following them (online, not failed). */
  readonly replicas: number;
  /** Replicas each grant, fencing-counter increment and record write waits for (`WAIT`). */
  readonly minReplicas: number;
  /** etcd: the cluster's members, the majority every write is committed on, and whether a leader answers now. */
  readonly members?: number;
  readonly quorum?: number;
  readonly leaderSeen?: boolean;
}

export interface Driver extends LeaseStore, RecordStore {
  readonly name: DriverName;
  /** True when processes on different machines coordinate through it. */
  readonly distributed: boolean;
  /**
   * The record's full write history, newest first (drivers that keep one): from the current revision,
   * or from `revision` (one the caller read and proved: the history listed is then exactly the proven
   * one, whatever was written since).
   */
  readHistory?(key: string, limit?: number, revision?: string): Promise<HistoryEntry[]>;
  /**
   * Squashes old history into a snapshot that keeps the record and the newest audit lines; with
   * `expected`, only when the record is at that revision (`{ok:false}` otherwise, as when it moved).
   */
  compact?(key: string, expected?: string): Promise<{ readonly ok: true; readonly squashed: number } | { readonly ok: false }>;
  /** Whether the history at `revision` has at least `writes` writes since its last compaction (or creation); one local query. */
  historyReaches?(revision: string, writes: number): Promise<boolean>;
  /** The backend's deployment as it answers now (drivers with replicas); one round trip. */
  describeDeployment?(): Promise<DeploymentInfo>;
  /** Closes sockets and handles. Safe to call twice. */
  close(): Promise<void>;
}
