import { parseCommandArgs } from '../args';
import type { Command } from '../command';
import { withContainer } from '../containerContext';

/** Coworkers' side of the queue: petition and withdraw. */

export const petitionCommand: Command = {
  name: 'petition',
  summary: 'join the queue for the lock',
  help: `usage: lockstep petition [--note TEXT]

Joins the queue; the order is the order in which the store recorded the petitions.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { note: { type: 'string' } });
    return withContainer(context, async container => {
      const { position } = await container.petition(values.note);
      context.out.result(`Queued at position ${position}.`, { position, identity: container.identity });
      return 0;
    });
  },
};

export const withdrawCommand: Command = {
  name: 'withdraw',
  summary: 'leave the queue',
  help: 'usage: lockstep withdraw\n\nRemoves your petition from the queue.',

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { position } = await container.withdraw();
      context.out.result(`Withdrawn from position ${position}.`, { position });
      return 0;
    });
  },
};
