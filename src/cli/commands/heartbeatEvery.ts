import {
  type Container,
  clearHeartbeatStop,
  formatClock,
  formatDuration,
  HeartbeatLoop,
  heartbeatStopRequested,
  LockState,
  systemClock,
  watchLockstepFolder,
} from '../../core/application';
import type { CommandContext } from '../command';

type End = { readonly kind: 'released' | 'stopped' } | { readonly kind: 'lost'; readonly error: Error };

/**
 * `lockstep heartbeat --every S`: core's heartbeat loop for a terminal-only lead. Renews every S
 * seconds until the lease is released (by `lockstep release`, which removes the session), lost
 * (exit 1; never revived), or the process is interrupted (SIGINT/SIGTERM, or the stop file of
 * `lockstep heartbeat --stop` where SIGTERM does not exist: exit 0, the lease then runs to its
 * expiry). The clone's `.git/lockstep/` is watched, so a release or a stop is noticed at once, not
 * at the next tick. Failures are retried with back-off and reported on stderr.
 */
export async function beatUntilEnd(context: CommandContext, container: Container, everyMs: number): Promise<number> {
  const status = await container.status();
  // Not holding: one heartbeat throws the precise reason (lost, superseded, not the holder).
  const start = status.state === LockState.HeldByMe && status.holder !== null ? status.holder : await container.heartbeat();
  const grant = start.grant;
  const gitDir = container.clone.gitDir;
  // A stop asked before this loop began was meant for an earlier one.
  clearHeartbeatStop(gitDir);
  let renewals = 0;
  let finish!: (end: End) => void;
  const ended = new Promise<End>(resolve => {
    finish = resolve;
  });

  const loop = new HeartbeatLoop({
    clock: systemClock,
    intervalMs: everyMs,
    expiresAt: start.expiresAt,
    keepAlive: true,
    grant,
    renew: async () => {
      const end = endAsked();
      if (end !== undefined) {
        finish(end);
        return { expiresAt: 0 };
      }
      return container.heartbeat();
    },
  });
  loop.onDidRenew(({ expiresAt }) => {
    renewals += 1;
    context.out.note(`Extended — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry.`);
  });
  loop.onDidFail(({ error, retryInMs }) => {
    context.out.note(
      `Heartbeat failed (${error instanceof Error ? error.message : 'unknown error'}); retrying in ${formatDuration(retryInMs)}.`,
    );
  });
  loop.onDidLose(loss => finish({ kind: 'lost', error: loss.error }));
  const interrupted = () => finish({ kind: 'stopped' });
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const watch = watchLockstepFolder(gitDir, () => {
    const end = endAsked();
    if (end !== undefined) finish(end);
  });

  /** `lockstep release` removes the session (the holder is done, not lost); `heartbeat --stop` leaves a stop file. */
  function endAsked(): End | undefined {
    if (container.session()?.grant !== grant) return { kind: 'released' };
    if (heartbeatStopRequested(gitDir)) return { kind: 'stopped' };
    return undefined;
  }

  context.out.note(
    `Heartbeat every ${formatDuration(everyMs)} for grant #${grant} (lease until ${formatClock(start.expiresAt)}). Stop with Ctrl-C or lockstep heartbeat --stop.`,
  );
  loop.start();
  const end = await ended;
  loop.dispose();
  watch.dispose();
  clearHeartbeatStop(gitDir);
  process.off('SIGINT', interrupted);
  process.off('SIGTERM', interrupted);
  if (end.kind === 'lost') throw end.error;
  const expiresAt = loop.expiresAt;
  context.out.result(
    end.kind === 'released'
      ? `Released elsewhere — heartbeat for grant #${grant} ended after ${renewals} renewals.`
      : `Stopped — grant #${grant} is no longer renewed; it expires in ${formatDuration(expiresAt - Date.now())} unless you heartbeat again.`,
    { grant, expiresAt, renewals, ended: end.kind },
  );
  return 0;
}
