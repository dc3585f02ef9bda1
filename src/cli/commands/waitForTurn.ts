import {
  ChangeWaiter,
  type Container,
  formatDuration,
  hasTurn,
  LockBusyError,
  LockState,
  type LockStatus,
  SECOND,
  systemClock,
  WAITING,
} from '../../core/application';
import type { CommandContext } from '../command';

/** How often `lockstep wait` re-reads the page when no announcement came (a driver without one, a lost one). */
const POLL_MS = SECOND;

/** One progress line, written when it changes. */
function progress(status: LockStatus, now: number): string {
  const h = status.holder;
  const held = h && h.expiresAt > now ? `held by ${h.identity} (grant #${h.grant}, ${formatDuration(h.expiresAt - now)} left)` : 'not held';
  if (status.position > 0) return `lockstep: waiting — position ${status.position} of ${status.queue.length}; ${held}`;
  return `lockstep: waiting — not in the queue (lockstep petition holds your place); ${held}`;
}

/** Blocks until the viewer may acquire (or holds the lock); exit 3 when `timeoutSeconds` runs out. */
export async function waitForTurn(context: CommandContext, container: Container, timeoutSeconds: number | undefined): Promise<number> {
  const clock = systemClock;
  const started = clock.monotonic();
  const deadline = timeoutSeconds === undefined ? Infinity : started + timeoutSeconds * SECOND;
  // Wakes on the driver's announcement of a change; a polling watch (git, SQL) keeps its fast pace meanwhile.
  const waiter = new ChangeWaiter(onChange => container.watch(onChange, { interest: () => WAITING }), clock);
  let said = '';
  try {
    for (;;) {
      const status = await container.status();
      const now = Date.now();
      if (status.canAcquire || status.state === LockState.HeldByMe) {
        const waitedMs = Math.round(clock.monotonic() - started);
        const line =
          status.state === LockState.HeldByMe
            ? 'You hold the lock.'
            : hasTurn(status)
              ? `${status.state === LockState.HolderSilent ? 'HOLDER SILENT — your turn: you may take over; acquire' : 'Your turn — acquire'} within ${formatDuration((status.turn?.endsAt ?? now) - now)} (lockstep acquire).`
              : 'The lock is free — acquire it now (lockstep acquire).';
        context.out.result(line, {
          state: status.state,
          canAcquire: status.canAcquire,
          turn: status.turn,
          position: status.position,
          waitedMs,
        });
        return 0;
      }
      const line = progress(status, now);
      if (line !== said) {
        context.out.note(line);
        said = line;
      }
      const left = deadline - clock.monotonic();
      if (left <= 0) {
        throw new LockBusyError(
          `Still not your turn after ${timeoutSeconds} s (${status.position > 0 ? `position ${status.position} of ${status.queue.length}` : 'not in the queue'}); run lockstep wait again to keep waiting.`,
          timeoutSeconds ?? 0,
        );
      }
      // Wake on the driver's announcement, or after a short poll (the backup), or at the deadline.
      await waiter.sleep(Math.min(left, POLL_MS));
    }
  } finally {
    waiter.dispose();
  }
}
