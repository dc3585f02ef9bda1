import {
  afterClear,
  AUDIT_LOG_KEEP,
  type AuditLine,
  type Container,
  formatTime,
  isBareRepository,
  isNoContainerHere,
  localiseTimes,
  LockConfigurationError,
  readPageInBareRepository,
} from '../../core/application';
import { parseCommandArgs, requireOption } from '../args';
import type { Command, CommandContext } from '../command';
import { withContainer } from '../containerContext';

/** The operator's one intervention and the audit trail it writes to. */

export const clearCommand: Command = {
  name: 'clear',
  summary: 'operator: clear a HOLDER SILENT lock, with a reason',
  help: `usage: lockstep clear --reason TEXT

Clears a lock whose holder went silent past expiry. Only identities listed as operators in
.lockstep.json may, only when the lock is HOLDER SILENT, and only with a reason. Every attempt
that reaches the lock page, refused ones included (a missing reason too: exit 1), is written to
the audit trail, and clear lines are never pushed out of it. The grant counter is kept, and the
page carries a caution mark until the next holder's release after a push.`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { reason: { type: 'string' } });
    // No reason is the protocol's refusal ('reason-required'), audited like every attempt.
    const reason = values.reason ?? '';
    return withContainer(context, async container => {
      const { clearedGrant, queueHead } = await container.clear(reason);
      context.out.result(afterClear(clearedGrant, queueHead), { clearedGrant, queueHead });
      return 0;
    });
  },
};

export const adoptCommand: Command = {
  name: 'adopt',
  summary: 'operator: recreate a lost lock page (audited)',
  help: `usage: lockstep adopt --reason TEXT --grant N --next-id N

Recreates the lock page of this container where .lockstep.json points (driver, prefix, store
location), when that store holds none (a lost or wiped store). A LOCKSTEP_* variable that points
at another page is refused (exit 5) and nothing is created: the environment supplies credentials
only. Only an operator may (exit 1 otherwise), with a reason; the page's first audit line says so.
An existing page is never overwritten (exit 2; a damaged one says so, exit 5), with one exception: on a
signed page (allowedSigners), a page that reads tampered is replaced by this adopt, signed with
the operator's key, and its verified history restarts there.

  --reason TEXT  why, for the audit trail
  --grant N      the highest grant anyone has seen (old audit output, clones' \`lockstep status\`):
                 the next grant is #N+1, so that no fence accepts an old clone's grant. A clone
                 raises N by itself to its own session's grant and the highest it has read.
  --next-id N    the first identifier the new page hands out: above every identifier minted on
                 the lost page, so that none is handed out again (a whole number from 1)`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, {
      reason: { type: 'string' },
      grant: { type: 'string' },
      'next-id': { type: 'string' },
    });
    const reason = requireOption(values.reason, '--reason');
    const grantFloor = wholeNumber(requireOption(values.grant, '--grant'), '--grant');
    const nextIdFloor = wholeNumber(requireOption(values['next-id'], '--next-id'), '--next-id');
    // Identifiers start at 1 (the help says so): 0 is a usage error here, before the store is touched.
    if (nextIdFloor < 1) throw new LockConfigurationError('--next-id must be a whole number from 1.', { setting: '--next-id' });
    return withContainer(context, async container => {
      // A clone that held or read a grant knows a floor: never let the new page go below it.
      const floor = Math.max(grantFloor, container.highestGrantSeen());
      const { grant, nextId } = await container.createPage({ reason, grantFloor: floor, nextIdFloor });
      const page = await container.page();
      context.out.result(
        `Adopted: a new lock page for container ${page.container}; the next grant is #${grant + 1}, the next identifier ${nextId}.`,
        { grant, nextId, page },
      );
      return 0;
    });
  },
};

function wholeNumber(text: string, flag: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new LockConfigurationError(`${flag} must be a whole number.`, { setting: flag });
  return Number(text);
}

export const auditCommand: Command = {
  name: 'audit',
  summary: 'print the audit trail',
  help: `usage: lockstep audit [--limit N] [--history]

Prints the audit trail of the lock record, oldest first, in local time with the zone (JSON: epoch
milliseconds). The record keeps every clear line and the last 500 other transitions (fewer when
they would pass 256 KiB). Refused attempts — pushes a guard refused (action push), refused clears —
are there too, in a section of their own (the last 50): one line per person and action, with how
many (×N), since when, and the latest one's grant and detail.
  --limit N    only the newest N lines (a whole number from 1)
In the shared bare repository it prints the record the server guard reads (its pinned settings).
  --history    git driver only (exit 2 on the others): every transition, from the lock ref's commits
               (a compaction keeps the newest 2,000 audit lines), up to the newest 2,000 or N`,

  async run(context) {
    const { values } = parseCommandArgs(context.args, { limit: { type: 'string' }, history: { type: 'boolean' } });
    const limit = values.limit === undefined ? Infinity : wholeNumber(values.limit, '--limit');
    if (limit < 1) throw new LockConfigurationError('--limit must be a whole number from 1.', { setting: '--limit' });
    try {
      return await withContainer(context, container => printAudit(context, container, values.history === true, limit));
    } catch (error) {
      // In the shared bare repository: the page the server guard reads (its pinned settings), as status shows there.
      if (!isNoContainerHere(error) || !(await isBareRepository(context.cwd))) throw error;
      if (values.history)
        throw new LockConfigurationError(
          "audit --history reads a clone's lock ref: run it in a clone of this repository; here, audit prints the record's lines.",
          { setting: 'history' },
        );
      const { record } = await readPageInBareRepository(context.cwd);
      printAuditLines(context, record.audit.slice(-limit));
      return 0;
    }
  },
};

async function printAudit(context: CommandContext, container: Container, history: boolean, limit: number): Promise<number> {
  if (history) {
    // A signed page is proven as every command proves it (every step since the last one this clone proved) and the
    // history listed is the proven revision's: a tampered history is an error naming the step (exit 5), never listed.
    const entries = await container.history(Number.isFinite(limit) ? limit : AUDIT_LOG_KEEP);
    if (entries === undefined) {
      throw new LockConfigurationError(
        `The ${container.config.driver} driver keeps no history beyond the record's audit lines; drop --history.`,
        { setting: 'history' },
      );
    }
    const oldestFirst = [...entries].reverse();
    context.out.result(
      oldestFirst.map(e => `${formatTime(e.time)}  ${localiseTimes(e.summary)}`),
      { history: oldestFirst },
    );
    return 0;
  }
  const { record } = await container.read();
  printAuditLines(context, record.audit.slice(-limit));
  return 0;
}

function printAuditLines(context: CommandContext, lines: readonly AuditLine[]): void {
  context.out.result(
    lines.length === 0
      ? 'No audit lines yet.'
      : lines.map(
          l =>
            `${formatTime(l.at)}  #${l.grant}  ${l.who}  ${l.action}${l.outcome === 'refused' ? ' (refused)' : ''}${l.count ? ` ×${l.count}` : ''}${l.since !== undefined ? ` since ${formatTime(l.since)}` : ''}${l.detail ? ` — ${localiseTimes(l.detail)}` : ''}`,
        ),
    { audit: lines },
  );
}

export const compactCommand: Command = {
  name: 'compact',
  summary: "git driver: squash the lock ref's history into one snapshot",
  help: `usage: lockstep compact

With the git driver, replaces the lock ref's chain of commits by one snapshot commit that keeps
the record unchanged and the newest 2,000 audit entries (audit --history still shows them; the
record itself keeps every operator's clear). The server guard accepts this one kind of history
rewrite. A write compacts by itself once 100 commits lie on the last snapshot; this command does
it now. Other drivers keep no history (exit 2).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    return withContainer(context, async container => {
      const { squashed } = await container.compact();
      context.out.result(`Compacted ${squashed} commits into one snapshot.`, { squashed });
      return 0;
    });
  },
};
