import type { Command } from '../command';
import { guardPrePush } from '../guard/prePush';
import { guardPreReceive } from '../guard/preReceive';

export const guardPrePushCommand: Command = {
  name: 'guard pre-push',
  summary: 'client fence (git pre-push hook)',
  help: `usage: lockstep guard pre-push REMOTE URL < refs

Run by the pre-push hook that \`lockstep hooks install\` writes. Refuses a push that updates a
protected branch of the shared remote unless this clone holds the live lease and its grant is the
current grant. Fails closed when the lock cannot be read.`,
  run: context => guardPrePush(context),
};

export const guardPreReceiveCommand: Command = {
  name: 'guard pre-receive',
  summary: 'server fence (git pre-receive hook)',
  help: `usage: lockstep guard pre-receive --settings FILE < refs

Run by the pre-receive hook that \`lockstep hooks install --server\` writes in the shared bare
repository, with the settings pinned at install time (FILE). Refuses any creation, update or
deletion of a protected branch (or of a symbolic ref that leads to one) whose push does not prove
the current, live grant (push options lockstep-grant and lockstep-proof), and, with the git
driver, any update of a lock ref that is not one legal transition of the lock record. Ignores
every LOCKSTEP_* variable. Fails closed.`,
  run: context => guardPreReceive(context),
};
