import { renderStatus, statusJson } from '../renderStatus';
import { withContainer } from '../containerContext';
import type { Command } from '../command';
import { parseCommandArgs } from '../args';

export const statusCommand: Command = {
  name: 'status',
  summary: 'show the lock: state, holder, grant, time left, queue',
  help: `usage: lockstep status [--json]

Shows the container lock as this clone sees it. States: free, held-by-me, held-by-other, queued,
your-turn, holder-silent, stale. With --json, one object (schema in the README).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const status = await container.status();
      context.out.result(renderStatus(status, Date.now()), statusJson(status, container.identity, container.config.driver));
      return 0;
    });
  },
};
