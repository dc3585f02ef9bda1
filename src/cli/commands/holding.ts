import { assertTtl, assertWait, parseSeconds, TTL_MAX_SECONDS, TTL_MIN_SECONDS, WAIT_MAX_SECONDS } from '../../core/bounds';
import { SECOND } from '../../core/clock';
import { LockConfigurationError } from '../../core/errors';
import { formatDuration } from '../../core/format';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';
import { beatUntilEnd } from './heartbeatEvery';

/** The holder's life cycle: acquire, heartbeat, release. */

export const acquireCommand: Command = {
  name: 'acquire',
  summary: 'take the container lock (exit 3 when held by another)',
  help: `usage: lockstep acquire [--ttl S] [--wait S]

Takes the lock for this clone: a new grant (previous + 1). The owner token stays in
.git/lockstep/session.json and is never printed.

  --ttl S    lease length in seconds (default: leaseTtlSeconds of .lockstep.json; at most ${TTL_MAX_SECONDS})
  --wait S   keep trying while it is held by another or not your turn, up to S seconds (0–${WAIT_MAX_SECONDS})

Exit codes: 0 acquired · 3 busy (held, or another waiter's turn) · 1 refused · 2 usage · 4 backend.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { ttl: { type: 'string' }, wait: { type: 'string' } });
    const ttl = values.ttl === undefined ? undefined : parseSeconds(values.ttl, 'ttl');
    if (ttl !== undefined) assertTtl(ttl);
    const wait = values.wait === undefined ? 0 : parseSeconds(values.wait, 'wait');
    assertWait(wait);
    return withContainer(context, async container => {
      const { grant, expiresAt } = await container.acquire({ wait, ...(ttl !== undefined ? { ttl } : {}) });
      context.out.result(`Acquired — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry. Heartbeat to keep it; release after you push.`,
        { grant, expiresAt, identity: container.identity });
      return 0;
    });
  },
};

export const heartbeatCommand: Command = {
  name: 'heartbeat',
  summary: 'extend your lease (never past 24 h from the grant); --every S keeps extending it',
  help: `usage: lockstep heartbeat [--every S]

Extends the live lease of this clone to min(now + TTL, grant time + 24 h). Fails with exit 1
when the lease was lost (expired or superseded); a lost lease is never revived.

  --every S  keep running and extend every S seconds (${TTL_MIN_SECONDS}–${TTL_MAX_SECONDS}), for leads who work without
             VS Code: failures are retried with back-off; once the lease's expiry passes without a
             successful extension (the store unreachable that long) it is lost: exit 1. Ends with
             exit 0 when the lock is released (lockstep release) or on Ctrl-C / SIGTERM.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { every: { type: 'string' } });
    const every = values.every === undefined ? undefined : parseSeconds(values.every, 'every');
    if (every !== undefined && (every < TTL_MIN_SECONDS || every > TTL_MAX_SECONDS)) {
      throw new LockConfigurationError(`--every must be from ${TTL_MIN_SECONDS} to ${TTL_MAX_SECONDS} seconds.`, { setting: 'every' });
    }
    return withContainer(context, async container => {
      if (every !== undefined) return beatUntilEnd(context, container, every * SECOND);
      const { grant, expiresAt } = await container.heartbeat();
      context.out.result(`Extended — grant #${grant}, ${formatDuration(expiresAt - Date.now())} until expiry.`, { grant, expiresAt });
      return 0;
    });
  },
};

export const releaseCommand: Command = {
  name: 'release',
  summary: 'release the lock after your work is pushed',
  help: `usage: lockstep release

Releases the lock, valid only after a push: refused (exit 1) while this clone has uncommitted
changes to tracked files or commits that the remote's protected branch does not have.
Reclaims the identifier ranges leased under the grant and opens the queue head's window.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { grant, reclaimed } = await container.release();
      const status = await container.status();
      const next = status.turn ? ` ${status.turn.identity} may acquire now.` : '';
      context.out.result(`Released grant #${grant}.${reclaimed > 0 ? ` ${reclaimed} unused identifiers reclaimed.` : ''}${next}`, { grant, reclaimed, next: status.turn?.identity ?? null });
      return 0;
    });
  },
};
