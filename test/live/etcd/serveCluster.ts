// Starts a three-member etcd cluster (etcdCluster.ts) for a suite that is not written in TypeScript
// (scripts/suites/vscode.sh), writes its client endpoints to the file named by the first argument once it
// has a leader and answers, and keeps it until SIGTERM or SIGINT, then stops every member and removes its
// folder. Exits 1 with the reason on stderr when the cluster cannot start.
import * as fs from 'node:fs';
import { EtcdCluster } from './etcdCluster';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: serveCluster.ts ENDPOINTS_FILE');
  const cluster = await EtcdCluster.start(3);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void cluster.dispose().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Written whole, then renamed, so a reader never sees half a line.
  fs.writeFileSync(`${out}.tmp`, `${cluster.endpoints}\n`);
  fs.renameSync(`${out}.tmp`, out);
  setInterval(() => {}, 1 << 30); // stays until a signal
}

main().catch(error => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
