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
  help: 'usage: lockstep audit [--limit N]\n\nPrints the audit trail of the lock record, oldest first.',

  async run(context) {
    const { values } = parseCommandArgs(context.args, { limit: { type: 'string' } });
    const limit = values.limit === undefined ? Infinity : Math.max(1, Number(values.limit) || 1);
    return withContainer(context, async container => {
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
