import {
  Container,
  containerSettings,
  describe,
  isBareRepository,
  isNoContainerHere,
  type PageRead,
  readPageFromRemote,
  readPageInBareRepository,
} from '../../core/application';
import { renderInterrupted, renderStatus, statusJson } from '../renderStatus';
import type { Command, CommandContext } from '../command';
import { parseCommandArgs } from '../args';

export const statusCommand: Command = {
  name: 'status',
  summary: 'show the lock: state, holder, grant, time left, queue (also in the bare remote, or --remote URL)',
  help: `usage: lockstep status [--remote URL] [--json]

Shows the container lock as this clone sees it, and which lock page it read (driver, location,
prefix, container). States: free, held-by-me, held-by-other, queued, your-turn, holder-silent,
stale. holder-silent (a holder's lease ran out without a release) is what everyone sees, the queue
head too: whether you may take over is canAcquire (and turn) in --json, and a line for people.
A clone whose lease lapsed sees its queue position or its turn like anyone else, with the lapse on
a second line; it is "stale" only when it is not in the queue.

In the shared bare repository it reads the page the server guard reads (its pinned settings).
  --remote URL   read a git-driver container from its remote, without a clone (a signed page is
                 proven first, with the allowed signers of its first protected branch)

With --json, one object (schema in the README). A store without the container's page is an
error (exit 5), never a free lock.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { remote: { type: 'string' } });
    if (values.remote !== undefined) return showWithoutClone(context, await readPageFromRemote(values.remote));
    let container: Container;
    try {
      container = await Container.open({ cwd: context.cwd, env: context.env });
    } catch (error) {
      // A bare repository has no work tree, so it opens as no clone: there, the page the server guard reads.
      // (Asked only then, so that a clone's status spawns no extra git.)
      if (isNoContainerHere(error) && (await isBareRepository(context.cwd))) {
        return showWithoutClone(context, await readPageInBareRepository(context.cwd));
      }
      throw error;
    }
    try {
      const status = await container.status();
      const page = await container.page();
      const unpushed = status.lapse ? await container.hasUnpushedWork() : undefined;
      const deployment = await container.deployment();
      const interrupted = { pendingAcquire: container.pendingAcquire()?.grant ?? null, finishedRelease: container.finishedRelease ?? null };
      context.out.result([...renderStatus(status, Date.now(), page, deployment, unpushed), ...renderInterrupted(interrupted)], {
        ...statusJson(status, container.identity, page, deployment),
        ...interrupted,
      });
      return 0;
    } finally {
      await container.close();
    }
  },
};

/** Without a clone there is no session and maybe no identity: the lock as LOCKSTEP_IDENTITY (or nobody) sees it. */
function showWithoutClone(context: CommandContext, read: PageRead): number {
  const identity = context.env.LOCKSTEP_IDENTITY?.trim() ?? '';
  const status = describe(read.record, containerSettings(read.file), { identity }, Date.now());
  context.out.result(renderStatus(status, Date.now(), read.page), statusJson(status, identity || null, read.page));
  return 0;
}
