import { LockConfigurationError } from '../../core/errors';
import { parseCommandArgs, requireOption } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** The lead hands out work: identifier ranges and blocks; coworkers mint identifiers. */

export const leaseIdsCommand: Command = {
  name: 'lease-ids',
  summary: 'lead: lease an identifier range to a coworker',
  help: `usage: lockstep lease-ids --to WHO --count N

Only the lead (the live holder) allocates. Hands WHO the next N identifiers, which nobody else
will ever be given; unused ones are reclaimed on release.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { to: { type: 'string' }, count: { type: 'string' } });
    const to = requireOption(values.to, '--to');
    const countText = requireOption(values.count, '--count');
    if (!/^\d+$/.test(countText)) throw new LockConfigurationError('--count must be a whole number.', { setting: 'count' });
    return withContainer(context, async container => {
      const { start, end } = await container.leaseIds(to, Number(countText));
      context.out.result(`Leased identifiers ${start}–${end} to ${to}.`, { to, start, end });
      return 0;
    });
  },
};

export const nextIdCommand: Command = {
  name: 'next-id',
  summary: 'mint the next identifier (from your leased range)',
  help: `usage: lockstep next-id

Prints the next identifier: from your leased range, or, for the lead, from the unallocated pool.
An identifier is consumed when printed and never handed out again.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { id } = await container.nextId();
      context.out.result(String(id), { id });
      return 0;
    });
  },
};

export const assignCommand: Command = {
  name: 'assign',
  summary: 'lead: assign a block of work to a coworker',
  help: 'usage: lockstep assign --to WHO --block TEXT\n\nRecords a block of work for WHO on the lock page (lead only).',

  async run(context) {
    const { values } = parseCommandArgs(context.args, { to: { type: 'string' }, block: { type: 'string' } });
    const to = requireOption(values.to, '--to');
    const text = requireOption(values.block, '--block');
    return withContainer(context, async container => {
      const { index } = await container.assign(to, text);
      context.out.result(`Assigned block ${index} to ${to}.`, { to, index });
      return 0;
    });
  },
};
