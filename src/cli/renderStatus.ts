import {
  type DeploymentInfo,
  describePage,
  formatClock,
  formatDuration,
  hasTurn,
  lapseLine,
  LockState,
  type LockStatus,
  type PageLocation,
  spansText,
} from '../core/application';

/** Short human lines for `lockstep status`: state, holder, grant, time left, queue position, the page read. */
export function renderStatus(
  status: LockStatus,
  now: number,
  page: PageLocation,
  deployment: DeploymentInfo | null = null,
  unpushed?: boolean,
): string[] {
  const h = status.holder;
  const lines: string[] = [];
  switch (status.state) {
    case LockState.Free:
      lines.push(status.turn ? `Free — ${status.turn.identity}'s turn for ${formatDuration(status.turn.endsAt - now)}` : 'Free');
      break;
    case LockState.HeldByMe:
      lines.push(`Held by you — grant #${h!.grant}, ${formatDuration(h!.expiresAt - now)} left`);
      break;
    case LockState.HeldByOther:
      lines.push(
        `Held by ${h!.identity} — grant #${h!.grant} since ${formatClock(h!.grantedAt)}, ${formatDuration(h!.expiresAt - now)} left`,
      );
      // The page names this person, but this clone has no token for the grant: the one fix, in words.
      if (status.heldElsewhere)
        lines.push(`This clone has no token for it. Next: ${status.next}; \`lockstep doctor\` says what else can be done.`);
      break;
    case LockState.Queued:
      lines.push(`Queued — position ${status.position} of ${status.queue.length}${h ? `; held by ${h.identity} (grant #${h.grant})` : ''}`);
      break;
    case LockState.YourTurn:
      lines.push(`Your turn — acquire within ${formatDuration((status.turn?.endsAt ?? now) - now)}`);
      break;
    case LockState.HolderSilent:
      lines.push(
        `HOLDER SILENT — ${h!.identity} (grant #${h!.grant}) expired ${formatDuration(now - h!.expiresAt)} ago${
          hasTurn(status)
            ? `; your turn: you may take over — acquire within ${formatDuration(status.turn!.endsAt - now)} (lockstep acquire)`
            : status.canAcquire
              ? '; you may acquire'
              : ''
        }`,
      );
      break;
    case LockState.Stale:
      lines.push(
        `Stale grant — ${lapseLine(status.lapse!, unpushed)}. Pushes from this clone are blocked${h && h.expiresAt > now ? `; ${h.identity} holds grant #${h.grant}` : ''}.`,
      );
      lines.push(`Next: ${status.next}. To drop the lapsed session on purpose: lockstep forget.`);
      break;
  }
  // A lapsed clone that is queued, or whose turn it is, sees that first; the lapse is the second line.
  if (status.lapse && status.state !== LockState.Stale) lines.push(`  (${lapseLine(status.lapse, unpushed)})`);
  const c = status.caution;
  if (c) {
    lines.push(
      `Caution — grant #${c.silentGrant} went silent; ${c.by} cleared or took over the lock at ${formatClock(c.since)}. Treat this copy with caution until the next holder pushes and releases.`,
    );
  }
  if (status.queue.length > 0) lines.push(`Queue: ${status.queue.map((p, i) => `${i + 1}. ${p.identity}`).join('  ')}`);
  for (const r of status.ranges)
    lines.push(`Identifiers ${r.start}–${r.end} leased to ${r.to} (next ${r.next <= r.end ? r.next : 'none left'})`);
  for (const b of status.blocks) lines.push(`Block ${b.id} for ${b.to}: ${b.text}`);
  if (status.pool.length > 0) lines.push(`Identifiers back in the pool: ${spansText(status.pool)}`);
  lines.push(`Page: ${describePage(page)}, container ${page.container}`);
  if (deployment?.members !== undefined) {
    lines.push(
      `Deployment: ${deployment.kind}, ${deployment.members} member(s), ${deployment.leaderSeen ? 'a leader answers' : 'NO LEADER (no quorum)'}; each write is committed on a majority of ${deployment.quorum}`,
    );
  } else if (deployment) {
    lines.push(
      `Deployment: ${deployment.kind}, ${deployment.masters} master(s), ${deployment.replicas} replica(s) seen; each grant waits for ${deployment.minReplicas}`,
    );
  }
  return lines;
}

/** The stable JSON form of a status (documented in the README). */
/** What this clone's interrupted commands left, as a read of the page judged it: said, never left for the reader to guess. */
export function renderInterrupted(interrupted: { pendingAcquire: number | null; finishedRelease: number | null }): string[] {
  const lines: string[] = [];
  if (interrupted.finishedRelease !== null)
    lines.push(`Your release of grant #${interrupted.finishedRelease}, whose answer was lost, had reached the page: it is finished now.`);
  if (interrupted.pendingAcquire !== null)
    lines.push(
      `Your acquire of grant #${interrupted.pendingAcquire} was interrupted and the page does not show it yet: its write may still land.` +
        ' `lockstep status` again says when it does; `lockstep acquire` retries with the same token (never two holders).',
    );
  return lines;
}

export function statusJson(
  status: LockStatus,
  identity: string | null,
  page: PageLocation,
  deployment: DeploymentInfo | null = null,
): Record<string, unknown> {
  return {
    state: status.state,
    identity,
    driver: page.driver,
    container: status.container,
    grant: status.grant,
    holder: status.holder,
    timeLeftMs: status.timeLeftMs,
    queue: status.queue,
    position: status.position,
    canAcquire: status.canAcquire,
    turn: status.turn,
    staleGrant: status.staleGrant,
    lapse: status.lapse,
    ranges: status.ranges,
    blocks: status.blocks,
    nextId: status.nextId,
    pool: status.pool,
    caution: status.caution,
    page,
    deployment,
  };
}
