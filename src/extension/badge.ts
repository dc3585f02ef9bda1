import {
  escapeControls,
  formatClock,
  formatDuration,
  hasTurn,
  lapseLine,
  type LiveChannel,
  LockState,
  type LockStatus,
} from '../core/application';
import { CommandIds } from './commandIds';

/**
 * The status-bar badge as a pure function of what the extension knows. No `vscode` import: the
 * status bar item renders this object, and unit tests check every state under plain mocha.
 */

export type BadgeSource =
  | { readonly kind: 'loading' }
  | { readonly kind: 'not-initialised' }
  | { readonly kind: 'offline'; readonly message: string; readonly retryAt: number }
  /** The store holds no page for this container (another path, prefix or driver than committed). Never Free. */
  | { readonly kind: 'no-page'; readonly message: string; readonly retryAt: number }
  /** The page's history holds a step that is not proven (a signed page, git driver): never Free, never its forged holder. */
  | { readonly kind: 'tampered'; readonly message: string; readonly retryAt: number }
  /** The settings are not valid (`.lockstep.json` breaks its schema, is a symbolic link, too large…): nothing is read until they are fixed. */
  | { readonly kind: 'misconfigured'; readonly message: string; readonly retryAt: number }
  /** The store stayed unreachable until our lease's expiry passed: lost, and never revived. */
  | { readonly kind: 'lease-lost-offline'; readonly grant: number; readonly expiredAt: number; readonly retryAt: number }
  | { readonly kind: 'status'; readonly status: LockStatus; readonly isOperator: boolean; readonly freshness?: BadgeFreshness };

/**
 * How stale the badge can be on this driver, stated in its tooltip. `withinMs`: the bound while the
 * window is idle; `activeWithinMs`: while it holds, waits or the user just acted (a polling watch:
 * git); `announced`: the store announces changes (PostgreSQL) and `withinMs` is the backup re-read;
 * `live`: a healthy push watch (Redis pub/sub, file watch) brings every change at once, with no re-read
 * (`withinMs` is then unused; while that watch is down the freshness is the poll setting's bound).
 * `settleWithinMs`: a change heard may wait up to this long before it is read (a window that neither
 * holds nor heads the queue: windowInterest.ts).
 */
export interface BadgeFreshness {
  readonly withinMs: number;
  readonly activeWithinMs?: number;
  readonly announced?: boolean;
  readonly live?: LiveChannel;
  readonly settleWithinMs?: number;
}

/** `mine`: the lock is yours (the theme's prominent status-bar colour), so it never looks like someone else's. */
export type BadgeSeverity = 'normal' | 'mine' | 'warning' | 'error';

export interface Badge {
  /** The state word for tests and accessibility: one of LockState or offline / no-page / tampered / misconfigured / not-initialised / loading. */
  readonly state: string;
  readonly text: string;
  /** Markdown. */
  readonly tooltip: string;
  readonly severity: BadgeSeverity;
  readonly command: string | undefined;
}

export function badgeFor(source: BadgeSource, now: number): Badge {
  switch (source.kind) {
    case 'loading':
      return {
        state: 'loading',
        text: '$(sync~spin) Lockstep',
        tooltip: 'Lockstep: reading the lock…',
        severity: 'normal',
        command: CommandIds.showLockPage,
      };
    case 'not-initialised':
      return {
        state: 'not-initialised',
        text: '$(circle-slash) Lockstep: not initialised',
        tooltip: 'This repository is not a Lockstep container yet. Click to initialise it.',
        severity: 'normal',
        command: CommandIds.initialise,
      };
    case 'offline':
      return {
        state: 'offline',
        text: '$(debug-disconnect) Offline',
        tooltip: `**Lockstep: backend unreachable**\n\n${source.message}\n\nRetrying in ${formatDuration(source.retryAt - now)}. Click to retry now.`,
        severity: 'error',
        command: CommandIds.refresh,
      };
    case 'no-page':
      return {
        state: 'no-page',
        text: '$(error) Lockstep: no lock page',
        tooltip: `**Lockstep: no lock page in this store**\n\n${source.message}\n\nRetrying in ${formatDuration(source.retryAt - now)}. Click to retry now.`,
        severity: 'error',
        command: CommandIds.refresh,
      };
    case 'tampered':
      return {
        state: 'tampered',
        text: '$(error) Lockstep: page tampered',
        tooltip: `**Lockstep: the lock page is tampered**\n\n${source.message}\n\nNo one is shown as holder and nothing is acquired until an operator repairs the page. Retrying in ${formatDuration(source.retryAt - now)}. Click to retry now.`,
        severity: 'error',
        command: CommandIds.refresh,
      };
    case 'misconfigured':
      return {
        state: 'misconfigured',
        text: '$(error) Lockstep: settings not valid',
        tooltip: `**Lockstep: the container's settings are not valid**\n\n${source.message}\n\nNothing is acquired and no protected push passes the guard until the setting the message names is fixed (the editor marks what is wrong in .lockstep.json). Click to read them again.`,
        severity: 'error',
        command: CommandIds.refresh,
      };
    case 'lease-lost-offline':
      return {
        state: 'lease-lost-offline',
        text: `$(error) Lease lost (offline) #${source.grant}`,
        tooltip:
          `**Lockstep: lease lost while offline**\n\nYour lease (grant #${source.grant}) expired at ${formatClock(source.expiredAt)} while the backend was unreachable. ` +
          `It will not be renewed: once the backend is back, acquire again (a new grant) before pushing.\n\nRetrying the backend in ${formatDuration(source.retryAt - now)}. Click to retry now.`,
        severity: 'error',
        command: CommandIds.refresh,
      };
    case 'status':
      return statusBadge(source.status, source.isOperator, now, source.freshness);
  }
}

/**
 * The caution mark (seed 001, TPS 5.10) in the badge's own words, not only in its tooltip: after
 * HOLDER SILENT the copy is to be read with caution until the next holder pushes and releases.
 */
const CAUTION_MARK = ' · $(warning) caution';

/** The page's texts (identities, notes) reach the badge and its tooltip with any control an older client stored shown as an escape. */
function statusBadge(s: LockStatus, isOperator: boolean, now: number, freshness: BadgeFreshness | undefined): Badge {
  const badge = stateBadge(s, isOperator, now);
  const tooltip = freshness ? `${badge.tooltip}  \n${freshnessLine(freshness)}` : badge.tooltip;
  const shown = { ...badge, text: escapeControls(badge.text), tooltip: escapeControls(tooltip) };
  return s.caution ? { ...shown, text: shown.text + CAUTION_MARK } : shown;
}

function stateBadge(s: LockStatus, isOperator: boolean, now: number): Badge {
  const h = s.holder;
  const tooltip = tooltipFor(s, isOperator, now);
  switch (s.state) {
    case LockState.Free:
      return {
        state: s.state,
        text: s.canAcquire ? '$(unlock) Free' : `$(unlock) Free — ${s.turn ? shortName(s.turn.identity) : 'the queue'}'s turn`,
        tooltip,
        severity: 'normal',
        command: s.canAcquire ? CommandIds.acquire : CommandIds.petition,
      };
    case LockState.HeldByMe:
      return {
        state: s.state,
        text: `$(pass-filled) Held by me #${h!.grant} · ${formatDuration(h!.expiresAt - now)}${s.queue.length > 0 ? ` · ${s.queue.length} waiting` : ''}`,
        tooltip,
        severity: 'mine',
        command: CommandIds.holderMenu,
      };
    case LockState.HeldByOther:
      // Your own live grant, from a clone (or session) other than this one: never "held by" you as if you were another.
      if (s.heldElsewhere)
        return {
          state: s.state,
          text: '$(lock) Held by me in another clone',
          tooltip,
          severity: 'normal',
          command: CommandIds.showLockPage,
        };
      return {
        state: s.state,
        text: `$(lock) Held by ${shortName(h!.identity)}`,
        tooltip,
        severity: 'normal',
        command: CommandIds.petition,
      };
    case LockState.Queued:
      return { state: s.state, text: `$(watch) Queued #${s.position}`, tooltip, severity: 'normal', command: CommandIds.showLockPage };
    case LockState.YourTurn:
      return {
        state: s.state,
        text: `$(bell) Your turn · ${formatDuration((s.turn?.endsAt ?? now) - now)}`,
        tooltip,
        severity: 'warning',
        command: CommandIds.acquire,
      };
    case LockState.HolderSilent:
      // The same words for everyone, the queue head and the operator included; what each may do is in the tooltip.
      return {
        state: s.state,
        text: '$(warning) HOLDER SILENT',
        tooltip,
        severity: 'warning',
        // The operator's click opens the clear flow (it asks for the reason); it never acquires.
        command: isOperator ? CommandIds.clear : s.canAcquire ? CommandIds.acquire : CommandIds.showLockPage,
      };
    case LockState.Stale:
      return {
        state: s.state,
        text: `$(error) Stale grant #${s.staleGrant} — push blocked`,
        tooltip,
        severity: 'error',
        // Petition only where it would be taken: not when the live grant is the viewer's own, in another clone.
        command: s.canAcquire
          ? CommandIds.acquire
          : h !== null && h.expiresAt > now && !s.heldElsewhere
            ? CommandIds.petition
            : CommandIds.showLockPage,
      };
  }
}

/** One line: how fresh the badge is on this driver (the watch's stated bound). */
export function freshnessLine(f: BadgeFreshness): string {
  const line = watchLine(f);
  return f.settleWithinMs ? `${line}; up to ${formatDuration(f.settleWithinMs)} later while you neither hold nor head the queue` : line;
}

function watchLine(f: BadgeFreshness): string {
  if (f.live) return `Updates: live: ${f.live}, as they happen`;
  if (f.announced) return `Updates: as they happen; re-read at least every ${formatDuration(f.withinMs)}`;
  if (f.activeWithinMs !== undefined && f.activeWithinMs < f.withinMs) {
    return `Updates: within ${formatDuration(f.withinMs)}; within ${formatDuration(f.activeWithinMs)} while you hold, wait or just acted`;
  }
  return `Updates: within ${formatDuration(f.withinMs)}`;
}

function tooltipFor(s: LockStatus, isOperator: boolean, now: number): string {
  const lines: string[] = [s.state === LockState.HolderSilent ? '**Lockstep: HOLDER SILENT**' : '**Lockstep**', ''];
  const h = s.holder;
  if (h) {
    lines.push(
      `Holder: ${h.identity}`,
      `Grant: #${h.grant}`,
      `Granted at: ${formatClock(h.grantedAt)}`,
      h.expiresAt > now ? `Expires in: ${formatDuration(h.expiresAt - now)}` : `Silent since: ${formatClock(h.expiresAt)}`,
    );
  } else {
    lines.push(`Free (last grant #${s.grant})`);
  }
  // What the click does is said once, and only of what it does (the operator's click clears).
  const operatorSilent = s.state === LockState.HolderSilent && isOperator;
  if (operatorSilent) {
    lines.push('You are an operator: click to clear this lock (it asks for the reason, which is audited).');
    if (s.canAcquire)
      lines.push(
        `Or take it over yourself: Lockstep: Acquire Lock from the Command Palette, or lockstep acquire${s.turn ? `, within ${formatDuration(s.turn.endsAt - now)}` : ''}.`,
      );
  } else if (s.state === LockState.HolderSilent && hasTurn(s)) {
    lines.push(`**Your turn: you may take over** — acquire within ${formatDuration(s.turn!.endsAt - now)} (click, or lockstep acquire).`);
  }
  if (s.turn) lines.push(`Turn: ${s.turn.identity} until ${formatClock(s.turn.endsAt)}`);
  if (s.lapse) lines.push(`Lapsed: ${lapseLine(s.lapse)}; pushes from this clone are blocked.`);
  if (!operatorSilent) lines.push(`Next: ${s.next}`);
  if (s.caution) {
    lines.push(
      `⚠ Caution: grant #${s.caution.silentGrant} went silent; ${s.caution.by} cleared or took over at ${formatClock(s.caution.since)}. Treat this copy with caution until the next holder pushes and releases.`,
    );
  }
  lines.push(s.queue.length === 0 ? 'Queue: empty' : `Queue: ${s.queue.map((p, i) => `${i + 1}. ${p.identity}`).join(', ')}`);
  return lines.join('  \n');
}

/**
 * The notification when it becomes the viewer's turn (hasTurn): after a release the lock is free for
 * them; over a silent holder they may take over. Plain text; the caller adds the Acquire button.
 */
export function turnNotice(s: LockStatus, now: number): string {
  return escapeControls(turnText(s, now));
}

function turnText(s: LockStatus, now: number): string {
  const until = s.turn ? ` (your window ends ${formatClock(s.turn.endsAt)}, in ${formatDuration(s.turn.endsAt - now)})` : '';
  if (s.state === LockState.HolderSilent && s.holder) {
    return (
      `Lockstep: HOLDER SILENT — ${s.holder.identity}'s lease (grant #${s.holder.grant}) ran out without a release. ` +
      `It is your turn: you may take over by acquiring the lock${until}.`
    );
  }
  return `Lockstep: your turn — the lock is yours to take${until}.`;
}

/** `alice@example.com` → `alice`: the badge is narrow; the tooltip has the full identity. */
export function shortName(identity: string): string {
  const at = identity.indexOf('@');
  return at > 0 ? identity.slice(0, at) : identity;
}

/** The badge's words without its codicons ("Held by bob@… #3"), for the lock page and pickers. */
export function badgeWords(badge: Badge): string {
  return badge.text.replace(/\$\([^)]+\)\s*/g, '');
}
