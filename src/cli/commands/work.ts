import { LockConfigurationError, MAX_IDS_PER_LEASE, mergeSpans, spansText } from '../../core/application';
import { parseCommandArgs, requireOption } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** The lead hands out work: identifier ranges and blocks; coworkers mint identifiers. */

export const leaseIdsCommand: Command = {
  name: 'lease-ids',
  summary: 'lead: lease an identifier range to a coworker',
  help: `usage: lockstep lease-ids --to WHO --count N [--new-identity]

Only the lead (the live holder) allocates. Hands WHO N identifiers that nobody else holds: first
those returned to the pool (leased before, never minted), then new ones. An identifier that was
minted is never handed out again; the ones WHO never mints go back to the pool on release.

  --new-identity   WHO has never appeared on this lock page (a new teammate, not a typo)

With --json: {to, count, spans: [{start, end}…], contiguous, start?, end?}. spans (inclusive,
lowest first, adjacent ones joined) are always there and are exactly the identifiers leased;
identifiers returned to the pool can make several spans with gaps between them. start and end
are given only when contiguous is true (one span: start…end); with a gap they are left out,
because the numbers between two spans belong to others.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      to: { type: 'string' },
      count: { type: 'string' },
      'new-identity': { type: 'boolean' },
    });
    const to = requireOption(values.to, '--to');
    const countText = requireOption(values.count, '--count');
    // Every bad count is a usage error (exit 2), whether it is not a number or out of range.
    if (!/^\d{1,15}$/.test(countText) || Number(countText) < 1 || Number(countText) > MAX_IDS_PER_LEASE) {
      throw new LockConfigurationError(`--count must be a whole number from 1 to ${MAX_IDS_PER_LEASE}.`, { setting: 'count' });
    }
    return withContainer(context, async container => {
      // Adjacent spans (a pool span that ends where the new identifiers begin) are one run for the reader.
      const spans = mergeSpans((await container.leaseIds(to, Number(countText), values['new-identity'] ?? false)).spans);
      // start/end only when they tell the truth: a script that loops from start to end must never mint across a gap.
      const contiguous = spans.length === 1;
      context.out.result(`Leased identifiers ${spansText(spans)} to ${to}.`, {
        to,
        count: Number(countText),
        spans,
        contiguous,
        ...(contiguous ? { start: spans[0].start, end: spans[0].end } : {}),
      });
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
  help: `usage: lockstep assign --to WHO --block TEXT [--new-identity]

Records a numbered block of work for WHO on the lock page (lead only). The block stays on the
page, across releases and new grants, until the lead or WHO marks it done (lockstep done).

  --new-identity   WHO has never appeared on this lock page (a new teammate, not a typo)`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      to: { type: 'string' },
      block: { type: 'string' },
      'new-identity': { type: 'boolean' },
    });
    const to = requireOption(values.to, '--to');
    const text = requireOption(values.block, '--block');
    return withContainer(context, async container => {
      const { index } = await container.assign(to, text, values['new-identity'] ?? false);
      context.out.result(`Assigned block ${index} to ${to}.`, { to, index });
      return 0;
    });
  },
};

export const doneCommand: Command = {
  name: 'done',
  summary: 'mark a block of work done (the lead or its assignee)',
  help: `usage: lockstep done --block N

Marks block N done and takes it off the lock page, with an audit line. The lead (the live holder)
or the block's assignee may. Blocks survive the lead's release until then.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { block: { type: 'string' } });
    const text = requireOption(values.block, '--block');
    if (!/^\d{1,15}$/.test(text))
      throw new LockConfigurationError('--block must be a block number (lockstep status lists them).', { setting: 'block' });
    return withContainer(context, async container => {
      const { block, to } = await container.markDone(Number(text));
      context.out.result(`Block ${block} of ${to} is done.`, { block, to });
      return 0;
    });
  },
};
