/**
 * The invariants of a container-protocol chaos run (issue 15), as a pure function of what the run saw: the
 * record's audit lines (collected from the store over time), the holders observed in the record, the clones'
 * own reports (grants acquired, identifiers minted, clears done, pushes started) and the remote's landings
 * (a post-receive hook's log of each update of the protected branch, with the push's lockstep-grant option).
 */
import type { AuditLine } from '../src/core/lockRecord';

export interface ObservedHolder {
  readonly grant: number;
  readonly grantedAt: number;
  readonly expiresAt: number;
}
export interface Landing {
  readonly at: number;
  readonly sha: string;
  readonly grant: number | null;
}
export interface PushStart {
  readonly sha: string;
  readonly at: number;
}

export interface ContainerRun {
  readonly audit: readonly AuditLine[];
  readonly holders: readonly ObservedHolder[];
  /** Lease length of an acquire (`acquire --ttl`) and of a heartbeat (the container's leaseTtlSeconds), in ms. */
  readonly acquireTtlMs: number;
  readonly heartbeatTtlMs: number;
  readonly acquired: readonly number[];
  readonly minted: readonly number[];
  readonly cleared: readonly number[];
  readonly pushes: readonly PushStart[];
  readonly landings: readonly Landing[];
}

export interface ContainerVerdict {
  readonly grants: number;
  readonly landings: number;
  readonly minted: number;
  readonly clears: number;
  readonly violations: readonly string[];
}

interface Lease {
  grant: number;
  start: number;
  end: number;
}

/** Each grant's live interval: from its acquire to its release, its clear, or its last known expiry. */
export function leasesOf(run: Pick<ContainerRun, 'audit' | 'holders' | 'acquireTtlMs' | 'heartbeatTtlMs'>): Lease[] {
  const leases = new Map<number, Lease>();
  const done = run.audit.filter(l => l.outcome === 'done');
  for (const l of done) if (l.action === 'acquire') leases.set(l.grant, { grant: l.grant, start: l.at, end: l.at + run.acquireTtlMs });
  for (const l of done) {
    const lease = leases.get(l.grant);
    if (lease && l.action === 'heartbeat') lease.end = Math.max(lease.end, l.at + run.heartbeatTtlMs);
  }
  for (const h of run.holders) {
    const lease = leases.get(h.grant);
    if (lease) lease.end = Math.max(lease.end, h.expiresAt);
  }
  for (const l of done) {
    const lease = leases.get(l.grant);
    if (lease && (l.action === 'release' || l.action === 'clear')) lease.end = Math.min(lease.end, l.at);
  }
  return [...leases.values()].sort((a, b) => a.start - b.start);
}

export function checkContainerLog(run: ContainerRun): ContainerVerdict {
  const violations: string[] = [];
  const leases = leasesOf(run);
  // Grants strictly increase in order of acquisition and are never issued twice.
  const seen = new Set<number>();
  const acquires = run.audit.filter(l => l.action === 'acquire' && l.outcome === 'done');
  for (let i = 1; i < acquires.length; i++) {
    if (acquires[i].grant <= acquires[i - 1].grant)
      violations.push(`grants do not increase: #${acquires[i - 1].grant} then #${acquires[i].grant}`);
  }
  for (let i = 0; i < leases.length; i++) {
    // At most one live holder at any instant.
    if (i > 0 && leases[i].start < leases[i - 1].end)
      violations.push(
        `two live holders: grant #${leases[i].grant} acquired ${(leases[i - 1].end - leases[i].start).toFixed(0)} ms before grant #${leases[i - 1].grant} ended`,
      );
  }
  for (const g of run.acquired) {
    if (seen.has(g)) violations.push(`grant #${g} was reported acquired twice`);
    seen.add(g);
    if (!leases.some(l => l.grant === g)) violations.push(`grant #${g} was reported acquired but the audit has no acquire line for it`);
  }
  const ids = new Set<number>();
  for (const id of run.minted) {
    if (ids.has(id)) violations.push(`identifier ${id} was minted twice`);
    ids.add(id);
  }
  for (const g of run.cleared) {
    if (!run.audit.some(l => l.action === 'clear' && l.outcome === 'done' && l.grant === g))
      violations.push(`the clear of grant #${g} has no audit line`);
  }
  // Every landing on the protected branch carried a grant that was live, and current, within its push.
  for (const landing of run.landings) {
    const pushed = run.pushes.filter(p => p.sha === landing.sha).sort((a, b) => a.at - b.at)[0];
    if (landing.grant === null) {
      violations.push(`commit ${landing.sha.slice(0, 12)} landed without a grant`);
      continue;
    }
    const lease = leases.find(l => l.grant === landing.grant);
    const from = pushed?.at ?? Number.NEGATIVE_INFINITY;
    if (!pushed) violations.push(`commit ${landing.sha.slice(0, 12)} landed but no clone pushed it`);
    if (!lease) {
      violations.push(`commit ${landing.sha.slice(0, 12)} landed under grant #${landing.grant}, which the audit never granted`);
      continue;
    }
    if (!(lease.start <= landing.at && lease.end >= from))
      violations.push(`commit ${landing.sha.slice(0, 12)} landed under grant #${landing.grant}, not live during its push`);
    const newer = leases.find(l => l.grant > landing.grant! && l.start < from);
    if (newer)
      violations.push(`commit ${landing.sha.slice(0, 12)} landed under grant #${landing.grant} after grant #${newer.grant} was issued`);
  }
  return { grants: leases.length, landings: run.landings.length, minted: ids.size, clears: run.cleared.length, violations };
}
