import { createHash } from 'node:crypto';
import type { Disposable } from '../store';

/**
 * A push of record changes from the database (PostgreSQL `LISTEN`/`NOTIFY`; the other dialects
 * have none). The record's compare-and-swap sends `NOTIFY` on the record's channel in the write's
 * own transaction, with the new revision as payload; a watch LISTENs on that channel. Delivery is
 * best effort (a dropped connection loses what was sent meanwhile), so a watch always keeps a slow
 * poll behind it (recordWatch.ts).
 */
export interface ChangeFeed {
  /** Calls `onNotify` with each notification's payload on `channel`. Connects nothing by itself. */
  subscribe(channel: string, onNotify: (payload: string) => void): Disposable;
  /**
   * Connects (again, after a loss) and LISTENs on every subscribed channel; resolves at once when
   * that is already so. Once it resolves, a change committed later is announced. Rejects when the
   * server cannot be reached.
   */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The channel a record's changes are announced on: a digest of its key, so that neither the key
 * nor anything it was made from is in clear on the server (pg_stat_activity, logs). A lowercase
 * identifier of 49 characters (PostgreSQL truncates identifiers at 63).
 */
export function recordChannel(key: string): string {
  return `lockstep_${createHash('sha256').update('lockstep-notify\0').update(key).digest('hex').slice(0, 40)}`;
}
