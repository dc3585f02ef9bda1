/**
 * Typed messages between the lock page webview and the extension. No tokens ever cross: the view
 * gets identities, grants, times, the queue, ranges, blocks and the audit trail.
 */
import type { AuditLine, Block, Caution, GrantBar, IdRange, QueueWait } from '../core/application';

/** The timeline's bars and waits, each with its sentence (tooltip and text alternative). */
export interface TimelineView {
  readonly from: number;
  readonly to: number;
  readonly bars: readonly (GrantBar & { readonly text: string })[];
  readonly waits: readonly (QueueWait & { readonly text: string })[];
  /** Where the lines came from: the record's audit, or the git driver's longer history. */
  readonly source: 'audit' | 'history';
}

/** One container of the window, as the page's list shows it. */
export interface ContainerEntry {
  /** The workspace folder's URI (the key the page sends back). */
  readonly key: string;
  readonly folder: string;
  readonly state: string;
  readonly badgeText: string;
  readonly shown: boolean;
}

export interface LockPageView {
  readonly folder: string;
  readonly identity: string | undefined;
  /** Badge state word: a LockState, or offline / no-page / misconfigured / not-initialised / loading. */
  readonly state: string;
  readonly badgeText: string;
  readonly message: string | undefined;
  readonly grant: number;
  readonly holder: { identity: string; grant: number; grantedAt: number; expiresAt: number } | null;
  readonly queue: readonly { identity: string; at: number; note?: string }[];
  readonly position: number;
  readonly canAcquire: boolean;
  readonly isOperator: boolean;
  readonly turn: { identity: string; endsAt: number } | null;
  readonly ranges: readonly IdRange[];
  readonly blocks: readonly Block[];
  /** After HOLDER SILENT, until the next holder's release after a push. */
  readonly caution: Caution | null;
  readonly audit: readonly AuditLine[];
  readonly timeline: TimelineView | undefined;
  /** Every container of the window (multi-root), the shown one marked. */
  readonly containers: readonly ContainerEntry[];
  /** The extension's clock when the view was made; the page counts down from it. */
  readonly now: number;
}

export type ToWebview = { readonly type: 'lock/didChange'; readonly view: LockPageView };

export type FromWebview =
  | { readonly type: 'lock/ready' }
  | { readonly type: 'lock/acquire' }
  | { readonly type: 'lock/release' }
  | { readonly type: 'lock/petition' }
  | { readonly type: 'lock/withdraw' }
  | { readonly type: 'lock/clear' }
  | { readonly type: 'lock/refresh' }
  | { readonly type: 'lock/select'; readonly key: string };
