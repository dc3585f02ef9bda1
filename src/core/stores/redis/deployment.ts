import type { DeploymentInfo } from '../store';
import type { DeploymentKind } from './redisTarget';

/**
 * What a Redis deployment is made of, read from the server's own replies (pure parsing, so that
 * `lockstep status` and `doctor` show what Redis says, not what the URL promised).
 */

/** Online replicas of a master, from `INFO replication` (`slaveN:ip=…,state=online,…`). */
export function replicasFromInfo(info: string): number {
  let online = 0;
  for (const line of info.split(/\r?\n/)) {
    if (/^slave\d+:/.test(line) && /(?:^|,|:)state=online(?:,|$)/.test(line)) online++;
  }
  return online;
}

/** Masters that serve slots and replicas that follow a master, from `CLUSTER NODES`; failing or failed nodes are not counted. */
export function nodesFromClusterNodes(text: string): { masters: number; replicas: number } {
  let masters = 0;
  let replicas = 0;
  for (const line of text.split(/\r?\n/)) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const flags = fields[2]!.split(',');
    if (flags.some(f => f === 'fail' || f === 'fail?' || f === 'noaddr' || f === 'handshake') || fields[7] !== 'connected') continue;
    if (flags.includes('master') && fields.length > 8) masters++;
    else if (flags.includes('slave')) replicas++;
  }
  return { masters, replicas };
}

/** `WAIT`'s default: one replica for the replicated deployments, none for one server. */
export function defaultMinReplicas(kind: DeploymentKind): number {
  return kind === 'standalone' ? 0 : 1;
}

export function deploymentInfo(kind: DeploymentKind, nodes: { masters: number; replicas: number }, minReplicas: number): DeploymentInfo {
  return { kind: `redis-${kind}`, masters: nodes.masters, replicas: nodes.replicas, minReplicas };
}
