import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inCi } from '../../helpers/ci';
import { freePort } from '../../helpers/freePort';

/**
 * A real, throwaway redis-server for live tests and the benchmark: loopback only, a free port,
 * persistence off, its own temporary folder. Stop and start again keep the port (outage tests).
 */
export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly binary: string,
    private readonly extraArgs: readonly string[],
  ) {}

  /** The redis-server executable (LOCKSTEP_REDIS_SERVER overrides the search), or undefined when it is not installed. */
  static binary(): string | undefined {
    const override = process.env.LOCKSTEP_REDIS_SERVER;
    const candidates = override
      ? [override]
      : ['redis-server', '/usr/bin/redis-server', '/usr/sbin/redis-server', '/usr/local/bin/redis-server'];
    for (const candidate of candidates) {
      if (spawnSync(candidate, ['--version'], { stdio: 'ignore' }).status === 0) return candidate;
    }
    return undefined;
  }

  /** `extraArgs` are more redis-server options, e.g. `--user NAME on >PASSWORD ~* &* +@all`. */
  static async start(extraArgs: readonly string[] = []): Promise<RedisServer> {
    const binary = RedisServer.binary();
    if (!binary) throw new Error('redis-server is not installed (Debian: apt-get install redis-server).');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-redis-'));
    const server = new RedisServer(await freePort(), dir, binary, extraArgs);
    await server.resume();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the server again on the same port (its data is gone: persistence is off). */
  async resume(): Promise<void> {
    if (this.child) return;
    const child = await spawnUntilReady(this.binary, [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
      ...this.extraArgs,
    ]);
    this.child = child;
  }

  /** Stops the server (SIGTERM, as an operator would) and waits until it has exited. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** Kills the server at once (SIGKILL: no shutdown, no last replication) and waits until it has exited. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    await endProcess(child, signal);
  }

  /** Freezes the server process: connections stay open, nothing answers (SIGCONT resumes). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  unpause(): void {
    this.child?.kill('SIGCONT');
  }

  /** Stops the server and removes its folder. */
  async dispose(): Promise<void> {
    this.unpause();
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts a redis-server (or redis-sentinel) process and resolves once it logs `readyText` (a sentinel
 * logs `+monitor master` once it listens and watches); the process is SIGKILLed if this test process exits first.
 */
export async function spawnUntilReady(
  binary: string,
  args: readonly string[],
  readyText = 'Ready to accept connections',
): Promise<ChildProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // If this process ends without dispose() (a crash, an interrupted benchmark), take the server along.
  const reap = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${path.basename(binary)} did not start within 10 s:\n${output}`)), 10_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes(readyText)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void =>
      fail(new Error(`${path.basename(binary)} exited with ${code} while starting:\n${output}`));
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.stdout?.resume();
      child.stderr?.resume();
    };
    const fail = (error: Error): void => {
      cleanup();
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
  return child;
}

/** Sends `signal` to a child process (by its PID) and resolves once it has exited. */
export async function endProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>(resolve => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

export { freePort };

/**
 * Live suites call this in `before`: it skips loudly when redis-server is missing outside CI, and
 * fails in CI, where the suite must run.
 */
export function requireRedisServer(context: Mocha.Context): void {
  if (RedisServer.binary()) return;
  if (inCi()) throw new Error('redis-server is not installed, and CI must run the Redis suite. Install the Debian package redis-server.');
  console.log('\n  !!! SKIPPED: redis-server not installed; the Redis live tests did not run. !!!\n');
  context.skip();
}
