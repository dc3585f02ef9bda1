import { LockConfigurationError } from '../../core/errors';
import { parseCommandArgs, requireOption } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** The operator's one intervention and the audit trail it writes to. */

export const clearCommand: Command = {
  name: 'clear',
  summary: 'operator: clear a HOLDER SILENT lock, with a reason',
  help: `usage: lockstep clear --reason TEXT

Clears a lock whose holder went silent past expiry. Only identities listed as operators in
.lockstep.json may, only when the lock is HOLDER SILENT, and only with a reason. Every attempt,
refused ones included, is written to the audit trail. The grant counter is kept.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { reason: { type: 'string' } });
    const reason = requireOption(values.reason, '--reason');
    return withContainer(context, async container => {
      const { clearedGrant } = await container.clear(reason);
      context.out.result(`Cleared grant #${clearedGrant}; the audit trail says why. The queue head may acquire now.`, { clearedGrant });
      return 0;
    });
  },
};

export const auditCommand: Command = {
  name: 'audit',
  summary: 'print the audit trail',
  help: `usage: lockstep audit [--limit N] [--history]

Prints the audit trail of the lock record, oldest first (the record keeps the last 500 lines).
With --history and the git driver: the full history of the lock ref, one commit per transition.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { limit: { type: 'string' }, history: { type: 'boolean' } });
    const limit = values.limit === undefined ? Infinity : Math.max(1, Number(values.limit) || 1);
    return withContainer(context, async container => {
      if (values.history) {
        const entries = await container.history(Number.isFinite(limit) ? limit : 10_000);
        if (entries === undefined) {
          throw new LockConfigurationError(`The ${container.config.driver} driver keeps no history beyond the record's audit lines; drop --history.`, { setting: 'history' });
        }
        const oldestFirst = [...entries].reverse();
        context.out.result(oldestFirst.map(e => `${new Date(e.time).toISOString()}  ${e.summary}`), { history: oldestFirst });
        return 0;
      }
      const { record } = await container.read();
      const lines = record.audit.slice(-limit);
      context.out.result(
        lines.length === 0 ? 'No audit lines yet.' : lines.map(l =>
          `${new Date(l.at).toISOString()}  #${l.grant}  ${l.who}  ${l.action}${l.outcome === 'refused' ? ' (refused)' : ''}${l.count ? ` ×${l.count}` : ''}${l.detail ? ` — ${l.detail}` : ''}`),
        { audit: lines });
      return 0;
    });
  },
};

export const compactCommand: Command = {
  name: 'compact',
  summary: 'git driver: squash the lock ref\'s history into one snapshot',
  help: `usage: lockstep compact

With the git driver, replaces the lock ref's chain of commits by one snapshot commit that keeps
the record unchanged and every audit line (audit --history still shows them). The server guard
accepts this one kind of history rewrite. Other drivers keep no history (exit 2).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { squashed } = await container.compact();
      context.out.result(`Compacted ${squashed} commits into one snapshot.`, { squashed });
      return 0;
    });
  },
};
