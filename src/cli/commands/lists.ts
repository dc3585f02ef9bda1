import { formatClock } from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** The page's lists on their own: the queue, the identifier ranges, the blocks of work. */

export const queueCommand: Command = {
  name: 'queue',
  summary: 'list the queue, in order, with your position',
  help: `usage: lockstep queue

Lists the petitions in the order the store recorded them, marks yours, and says whose handover
window runs. JSON: {queue: [{identity, at, note?}], position, turn}.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const status = await container.status();
      const lines =
        status.queue.length === 0
          ? ['The queue is empty.']
          : status.queue.map(
              (p, i) =>
                `${i + 1}. ${p.identity}${p.identity === container.identity ? ' (you)' : ''} — since ${formatClock(p.at)}${p.note ? ` — ${p.note}` : ''}`,
            );
      if (status.turn) lines.push(`${status.turn.identity}'s turn until ${formatClock(status.turn.endsAt)}.`);
      context.out.result(lines, { queue: status.queue, position: status.position, turn: status.turn });
      return 0;
    });
  },
};

export const rangesCommand: Command = {
  name: 'ranges',
  summary: 'list the leased identifier ranges (--mine: yours)',
  help: `usage: lockstep ranges [--mine]

Lists the identifier ranges leased under the current grant: to whom, the span, the next identifier
to mint; and the identifiers back in the pool. JSON: {ranges: [{to, start, end, next, grant, at}], pool}.

  --mine   only the ranges leased to you`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { mine: { type: 'boolean' } });
    return withContainer(context, async container => {
      const status = await container.status();
      const ranges = status.ranges.filter(r => !values.mine || r.to === container.identity);
      const lines =
        ranges.length === 0
          ? [
              values.mine
                ? 'No identifier range is leased to you under the current grant.'
                : 'No identifier ranges are leased under the current grant.',
            ]
          : ranges.map(r => `${r.start}–${r.end} to ${r.to}: next ${r.next <= r.end ? r.next : 'none left'} (grant #${r.grant})`);
      context.out.result(lines, { ranges, pool: status.pool });
      return 0;
    });
  },
};

export const blocksCommand: Command = {
  name: 'blocks',
  summary: 'list the open blocks of work (--mine: yours)',
  help: `usage: lockstep blocks [--mine]

Lists the blocks of work on the page (they stay until marked done with lockstep done --block N).
JSON: {blocks: [{id, to, text, grant, at}]}.

  --mine   only the blocks assigned to you`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { mine: { type: 'boolean' } });
    return withContainer(context, async container => {
      const status = await container.status();
      const blocks = status.blocks.filter(b => !values.mine || b.to === container.identity);
      const lines =
        blocks.length === 0
          ? [values.mine ? 'No open block is assigned to you.' : 'No open blocks.']
          : blocks.map(b => `Block ${b.id} for ${b.to} (since ${formatClock(b.at)}): ${b.text}`);
      context.out.result(lines, { blocks });
      return 0;
    });
  },
};
