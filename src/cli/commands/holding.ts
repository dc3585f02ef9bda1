import {
  assertWait,
  formatDuration,
  LockConfigurationError,
  MAX_LEASE_TTL_MS,
  MIN_LEASE_TTL_MS,
  parseSeconds,
  parseTtlSeconds,
  pushProtectedBranch,
  requestHeartbeatStop,
  SECOND,
  TTL_MAX_SECONDS,
  TTL_MIN_SECONDS,
  WAIT_MAX_SECONDS,
} from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';
import { beatUntilEnd } from './heartbeatEvery';
import { waitForTurn } from './waitForTurn';

/** The holder's life cycle: acquire, heartbeat, release. */

/** A grant's lease length, in seconds (the pure rule's bounds, lockRecord.ts). */
const GRANT_TTL = { min: MIN_LEASE_TTL_MS / SECOND, max: MAX_LEASE_TTL_MS / SECOND };

export const acquireCommand: Command = {
  name: 'acquire',
  summary: 'take the container lock (exit 3 when held by another)',
  help: `usage: lockstep acquire [--ttl S] [--wait S]

Takes the lock for this clone: a new grant (previous + 1). The owner token stays in
.git/lockstep/session.json and is never printed.

  --ttl S    lease length in whole seconds, ${GRANT_TTL.min}–${GRANT_TTL.max}, the container's bounds as for leaseTtlSeconds
             (default: leaseTtlSeconds of .lockstep.json); the grant keeps it: each heartbeat extends the
             lease by that much
  --wait S   keep trying while it is held by another or not your turn, up to S seconds (0–${WAIT_MAX_SECONDS})

Acquiring again in the clone that holds the lock changes nothing and says so (exit 0, "already": true).
To wait longer than ${WAIT_MAX_SECONDS} s for your turn, use lockstep wait.

Exit codes: 0 acquired · 3 busy (held, or another waiter's turn) · 1 refused · 2 usage · 4 backend.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { ttl: { type: 'string' }, wait: { type: 'string' } });
    const ttl = values.ttl === undefined ? undefined : parseTtlSeconds(values.ttl, 'ttl', GRANT_TTL);
    const wait = values.wait === undefined ? 0 : parseSeconds(values.wait, 'wait');
    assertWait(wait);
    return withContainer(context, async container => {
      const { grant, expiresAt, already } = await container.acquire({ wait, ...(ttl !== undefined ? { ttl } : {}) });
      context.out.result(
        already
          ? `You already hold the lock in this clone — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry. Nothing changed; heartbeat to extend it.`
          : `Acquired — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry. Heartbeat to keep it; release after you push.`,
        { grant, expiresAt, identity: container.identity, already: already === true },
      );
      return 0;
    });
  },
};

export const heartbeatCommand: Command = {
  name: 'heartbeat',
  summary: 'extend your lease (never past 24 h from the grant); --every S keeps extending it',
  help: `usage: lockstep heartbeat [--every S | --stop]

Extends the live lease of this clone to min(now + TTL, grant time + 24 h), where TTL is the
grant's own (acquire --ttl, else leaseTtlSeconds of .lockstep.json when it was acquired). Fails with exit 1
when the lease was lost (expired or superseded); a lost lease is never revived.

  --every S  keep running and extend every S seconds (${TTL_MIN_SECONDS}–${TTL_MAX_SECONDS}), for leads who work without
             VS Code: failures are retried with back-off; once the lease's expiry passes without a
             successful extension (the store unreachable that long) it is lost: exit 1. Ends with
             exit 0 when the lock is released (lockstep release), on Ctrl-C / SIGTERM, or at --stop.
  --stop     end this clone's running heartbeat --every loop (exit 0 there) without releasing: the
             lease runs to its expiry. It leaves a stop file, .git/lockstep/heartbeat.stop, that the
             loop watches: the way to end it where SIGTERM does not exist (Windows).`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { every: { type: 'string' }, stop: { type: 'boolean' } });
    if (values.stop && values.every !== undefined) {
      throw new LockConfigurationError('Give either --every or --stop, not both.', { setting: 'stop' });
    }
    const every = values.every === undefined ? undefined : parseSeconds(values.every, 'every');
    if (every !== undefined && (every < TTL_MIN_SECONDS || every > TTL_MAX_SECONDS)) {
      throw new LockConfigurationError(`--every must be from ${TTL_MIN_SECONDS} to ${TTL_MAX_SECONDS} seconds.`, { setting: 'every' });
    }
    return withContainer(context, async container => {
      if (values.stop) {
        requestHeartbeatStop(container.clone.gitDir);
        context.out.result(
          'Asked the heartbeat --every loop of this clone to stop; nothing was released (the lease runs to its expiry unless you heartbeat or release).',
          { stopRequested: true },
        );
        return 0;
      }
      if (every !== undefined) return beatUntilEnd(context, container, every * SECOND);
      const { grant, expiresAt } = await container.heartbeat();
      context.out.result(`Extended — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry.`, { grant, expiresAt });
      return 0;
    });
  },
};

export const releaseCommand: Command = {
  name: 'release',
  summary: 'release the lock after your work is pushed (--push: push, then release)',
  help: `usage: lockstep release [--push]

Releases the lock, valid only after a push: refused (exit 1) while this clone has uncommitted
changes to tracked files or commits that the remote's protected branch does not have. A clone that
does not hold the live grant is told so first (exit 1), with its next step.
Reclaims the identifier ranges leased under the grant, opens the queue head's window, and writes
the landed commit into the audit line.

  --push   push the protected branch to the shared remote first (what VS Code's Push and Release
           does); when the push is refused, nothing is released (exit 1)`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { push: { type: 'boolean' } });
    return withContainer(context, async container => {
      if (values.push) {
        await container.heartbeat(); // a lapsed lease is said as such before anything is pushed
        const { branch, remote } = await pushProtectedBranch(container);
        context.out.note(`lockstep: pushed ${branch} to ${remote}.`);
      }
      const { grant, reclaimed, landed, already } = await container.release();
      const status = await container.status();
      const next = status.turn ? ` ${status.turn.identity} may acquire now.` : '';
      const what = already
        ? `Grant #${grant} was already released (an earlier release reached the page; its answer was lost).`
        : `Released grant #${grant} (${landed ? `landed ${landed}` : 'nothing landed'}).`;
      // Caution ends only at a release with a landing (docs/protocol.md#landings-and-caution): say when it stays.
      const caution =
        status.caution && !already
          ? ` Caution stays (grant #${status.caution.silentGrant} went silent) until a holder lands and releases.`
          : '';
      context.out.result(`${what}${reclaimed > 0 ? ` ${reclaimed} unused identifiers reclaimed.` : ''}${caution}${next}`, {
        grant,
        reclaimed,
        next: status.turn?.identity ?? null,
        landed,
        pushed: values.push === true,
        ...(already ? { already: true } : {}),
      });
      return 0;
    });
  },
};

export const forgetCommand: Command = {
  name: 'forget',
  summary: "drop this clone's lapsed session and push proof on purpose",
  help: `usage: lockstep forget

For a clone whose lease lapsed (expired, superseded or cleared) and whose work under it will not
be pushed: removes .git/lockstep/session.json and the push proof, so that the clone no longer shows
as stale. Its commits stay in git. Refused (exit 1) while the session is the live holder: push and
release that instead (lockstep release --push).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { grant } = await container.forget();
      context.out.result(
        grant === null
          ? 'This clone had no session; nothing to forget.'
          : `Forgot the lapsed session of grant #${grant}; this clone holds nothing now.`,
        { forgotten: grant },
      );
      return 0;
    });
  },
};

export const waitCommand: Command = {
  name: 'wait',
  summary: 'block until it is your turn or the lock is free (--timeout S; exit 3 when it runs out)',
  help: `usage: lockstep wait [--timeout S]

Waits until you may acquire (your turn in the queue, or a free lock), printing progress on stderr
when your position or the holder changes, then exits 0; it does not acquire. Petition first to
hold a place in the queue (lockstep petition). Without --timeout it waits as long as it takes.

  --timeout S   give up after S seconds: exit 3 (busy)

Exit codes: 0 you may acquire now (or you hold the lock) · 3 the time ran out · 4 backend.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { timeout: { type: 'string' } });
    const timeout = values.timeout === undefined ? undefined : parseSeconds(values.timeout, 'timeout');
    return withContainer(context, container => waitForTurn(context, container, timeout));
  },
};
