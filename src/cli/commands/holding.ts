import { parseSeconds } from '../../core/bounds';
import { formatDuration } from '../../core/format';
import { LockConfigurationError } from '../../core/errors';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** The holder's life cycle: acquire, heartbeat, release. */

export const acquireCommand: Command = {
  name: 'acquire',
  summary: 'take the container lock (exit 3 when held by another)',
  help: `usage: lockstep acquire [--ttl S] [--wait S]

Takes the lock for this clone: a new grant (previous + 1). The owner token stays in
.git/lockstep/session.json and is never printed.

  --ttl S    lease length in seconds (default: leaseTtlSeconds of .lockstep.json; at most 24 h)
  --wait S   keep trying while it is held by another or not your turn, up to S seconds (0–60)

Exit codes: 0 acquired · 3 busy (held, or another waiter's turn) · 1 refused · 2 usage · 4 backend.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { ttl: { type: 'string' }, wait: { type: 'string' } });
    const ttl = values.ttl === undefined ? undefined : parseSeconds(values.ttl, 'ttl');
    if (ttl !== undefined && (ttl < 1 || ttl > 86_400)) throw new LockConfigurationError('--ttl must be from 1 to 86400 seconds.', { setting: 'ttl' });
    const wait = values.wait === undefined ? 0 : parseSeconds(values.wait, 'wait');
    if (wait > 60) throw new LockConfigurationError('--wait must be from 0 to 60 seconds.', { setting: 'wait' });
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
  summary: 'extend your lease (never past 24 h from the grant)',
  help: `usage: lockstep heartbeat

Extends the live lease of this clone to min(now + TTL, grant time + 24 h). Fails with exit 1
when the lease was lost (expired or superseded); a lost lease is never revived.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
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
