import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { inCi } from '../../helpers/ci';
import { freePort } from '../../helpers/freePort';
import { waitFor } from '../../helpers/waitFor';

/**
 * A member's TLS on its client URL (`https://`): its certificate and key (PEM files), and with `clientCaFile`
 * etcd's client-certificate authentication (`--client-cert-auth`: a client must show a certificate that CA signed).
 * Such a member answers /health on a plain loopback metrics URL, so the helper needs no certificate to wait for it.
 */
export interface EtcdServerTls {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile?: string;
}

/**
 * A real, throwaway three-member etcd cluster for live tests (Debian's etcd-server): loopback only,
 * free client and peer ports, each member's data in one temporary folder, every member started and
 * stopped by its PID. `start` resolves once the cluster answers /health with a leader, waiting for
 * the condition with a deadline, never for a fixed time. A member can be killed (SIGKILL), paused
 * (SIGSTOP/SIGCONT) and started again on its ports and data (a restart rejoins the cluster).
 */
export class EtcdCluster {
  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    readonly members: readonly EtcdMember[],
  ) {}

  /** The etcd executable (LOCKSTEP_ETCD_SERVER overrides the search), or undefined when it is not installed. */
  static binary(): string | undefined {
    const override = process.env.LOCKSTEP_ETCD_SERVER;
    const candidates = override ? [override] : ['etcd', '/usr/bin/etcd', '/usr/local/bin/etcd'];
    for (const candidate of candidates) {
      if (spawnSync(candidate, ['--version'], { stdio: 'ignore' }).status === 0) return candidate;
    }
    return undefined;
  }

  /** Starts `size` members (three by default; with `tls`, https:// client URLs) and waits until the cluster has a leader and answers. */
  static async start(size = 3, tls?: EtcdServerTls): Promise<EtcdCluster> {
    const binary = EtcdCluster.binary();
    if (!binary) throw new Error('etcd is not installed (Debian: apt-get install etcd-server).');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-etcd-'));
    const members: EtcdMember[] = [];
    for (let i = 0; i < size; i++) {
      const ports = { client: await freePort(), peer: await freePort(), ...(tls ? { metrics: await freePort() } : {}) };
      members.push(new EtcdMember(`m${i}`, ports, path.join(dir, `m${i}`), tls));
    }
    const cluster = new EtcdCluster(binary, dir, members);
    const initial = members.map(m => `${m.name}=${m.peerUrl}`).join(',');
    const token = `lockstep-${path.basename(dir)}`;
    try {
      for (const member of members) member.spawn(binary, initial, token);
      await cluster.waitHealthy();
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  /** The client URLs, as LOCKSTEP_ETCD_ENDPOINTS takes them (comma-separated). */
  get endpoints(): string {
    return this.members.map(m => m.clientUrl).join(',');
  }

  /** Waits until a majority of members answer /health with `true` (a leader, a quorum). */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => (await Promise.all(this.members.map(m => m.healthy()))).filter(Boolean).length * 2 > this.members.length, {
      timeoutMs,
      intervalMs: 50,
      description: 'the etcd cluster answered /health with a leader',
    });
  }

  /** The member that is leader now (asks each running member's /v3/maintenance/status). */
  async leader(timeoutMs = 15_000): Promise<EtcdMember> {
    return waitFor(
      async () => {
        for (const member of this.members) {
          const status = await member.status();
          if (status !== undefined && status.leader !== '0' && status.leader === status.memberId) return member;
        }
        return undefined;
      },
      { timeoutMs, intervalMs: 50, description: 'an etcd member reported itself leader' },
    );
  }

  /** Starts a stopped or killed member again on its ports and data, and waits until it rejoined and answers /health. */
  async restart(member: EtcdMember, timeoutMs = 30_000): Promise<void> {
    const initial = this.members.map(m => `${m.name}=${m.peerUrl}`).join(',');
    member.spawn(this.binary, initial, `lockstep-${path.basename(this.dir)}`);
    await waitFor(() => member.healthy(), {
      timeoutMs,
      intervalMs: 50,
      description: `etcd member ${member.name} rejoined and answered /health`,
    });
  }

  /** Stops every member (SIGCONT first, so a paused one can end) and removes the folder. */
  async dispose(): Promise<void> {
    await Promise.all(this.members.map(m => m.stop('SIGTERM')));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One etcd process of a cluster: its name, ports, data folder and (while it runs) its child process. */
export class EtcdMember {
  private child: ChildProcess | undefined;
  private log = '';

  constructor(
    readonly name: string,
    private readonly ports: { readonly client: number; readonly peer: number; readonly metrics?: number },
    private readonly dataDir: string,
    private readonly tls?: EtcdServerTls,
  ) {}

  get clientPort(): number {
    return this.ports.client;
  }
  get peerPort(): number {
    return this.ports.peer;
  }
  get clientUrl(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.clientPort}`;
  }
  /** Where /health is asked: the client URL, or a TLS member's plain metrics URL. */
  private get healthUrl(): string {
    return this.ports.metrics === undefined ? `${this.clientUrl}/health` : `http://127.0.0.1:${this.ports.metrics}/health`;
  }
  get peerUrl(): string {
    return `http://127.0.0.1:${this.peerPort}`;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }
  get running(): boolean {
    return this.child !== undefined;
  }
  /** The member's own output (for a failure's message). */
  get output(): string {
    return this.log;
  }

  spawn(binary: string, initialCluster: string, token: string): void {
    if (this.child) return;
    // A member with data rejoins with what its data says; `new` only applies to an empty data folder.
    const child = spawn(
      binary,
      [
        '--name',
        this.name,
        '--data-dir',
        this.dataDir,
        '--listen-client-urls',
        this.clientUrl,
        '--advertise-client-urls',
        this.clientUrl,
        '--listen-peer-urls',
        this.peerUrl,
        '--initial-advertise-peer-urls',
        this.peerUrl,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-token',
        token,
        '--initial-cluster-state',
        'new',
        ...(this.tls
          ? [
              '--cert-file',
              this.tls.certFile,
              '--key-file',
              this.tls.keyFile,
              '--listen-metrics-urls',
              `http://127.0.0.1:${this.ports.metrics}`,
            ]
          : []),
        ...(this.tls?.clientCaFile ? ['--client-cert-auth', '--trusted-ca-file', this.tls.clientCaFile] : []),
        // Quick elections on loopback: a killed leader is replaced within a second or two.
        '--heartbeat-interval',
        '50',
        '--election-timeout',
        '500',
        '--logger',
        'zap',
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer): void => {
      this.log = (this.log + chunk.toString()).slice(-8_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    // If this process ends without dispose() (a crash, an interrupted run), take the member along.
    const reap = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', reap);
    child.once('exit', () => {
      process.off('exit', reap);
      if (this.child === child) this.child = undefined;
    });
    this.child = child;
  }

  /** GET /health answers `"health":"true"` (this member sees a leader and a quorum). */
  async healthy(): Promise<boolean> {
    if (!this.child) return false;
    const body = await getJson(this.healthUrl);
    return (body as { health?: unknown } | undefined)?.health === 'true';
  }

  /** This member's view: its id and the leader's id (decimal strings), or undefined when it does not answer (or uses TLS). */
  async status(): Promise<{ memberId: string; leader: string } | undefined> {
    if (!this.child || this.tls) return undefined;
    const body = (await postJson(`${this.clientUrl}/v3/maintenance/status`, {})) as
      | { header?: { member_id?: string }; leader?: string }
      | undefined;
    if (body?.header?.member_id === undefined || body.leader === undefined) return undefined;
    return { memberId: body.header.member_id, leader: body.leader };
  }

  /** Kills the member at once (SIGKILL) and waits until it has exited. */
  kill(): Promise<void> {
    return this.stop('SIGKILL');
  }

  /** Freezes the process: its sockets stay open, nothing answers (SIGCONT resumes). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  unpause(): void {
    this.child?.kill('SIGCONT');
  }

  /** Sends `signal` to the member's PID (after SIGCONT, so a paused one can act on it) and waits until it has exited. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>(resolve => {
      child.once('exit', () => resolve());
      child.kill('SIGCONT');
      child.kill(signal);
    });
  }
}

function request(url: string, method: 'GET' | 'POST', body?: unknown): Promise<unknown> {
  return new Promise(resolve => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, timeout: 1_000, headers: text ? { 'content-type': 'application/json' } : {} }, res => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', chunk => {
        data += chunk;
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(data));
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(text);
  });
}
const getJson = (url: string) => request(url, 'GET');
const postJson = (url: string, body: unknown) => request(url, 'POST', body);

/**
 * Live suites call this in `before`: it skips loudly when etcd is missing outside CI, and fails in
 * CI, where the suite must run.
 */
export function requireEtcd(context: Mocha.Context): void {
  if (EtcdCluster.binary()) return;
  if (inCi()) throw new Error('etcd is not installed, and CI must run the etcd suite. Install the Debian package etcd-server.');
  console.log('\n  !!! SKIPPED: etcd not installed; the etcd live tests did not run. !!!\n');
  context.skip();
}
