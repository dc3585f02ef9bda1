import { renderStatus, statusJson } from '../renderStatus';
import { withContainer } from '../containerContext';
import type { Command } from '../command';
import { parseCommandArgs } from '../args';

export const statusCommand: Command = {
  name: 'status',
  summary: 'show the lock: state, holder, grant, time left, queue',
  help: `usage: lockstep status [--json]

Shows the container lock as this clone sees it, and which lock page it read (driver, location,
prefix, container). States: free, held-by-me, held-by-other, queued, your-turn, holder-silent,
stale. With --json, one object (schema in the README). A store without the container's page is
an error (exit 5), never a free lock.`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const status = await container.status();
      const page = await container.page();
      const deployment = await container.deployment();
      context.out.result(renderStatus(status, Date.now(), page, deployment), statusJson(status, container.identity, page, deployment));
      return 0;
    });
  },
};
