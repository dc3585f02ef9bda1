/**
 * scripts/suite-group.sh, which the suites whose tests start servers (scripts/suites/redis.sh, redis-ha.sh, etcd.sh,
 * chaos.sh) run their test command through: a suite stopped by SIGTERM or SIGINT (CI's time limit, Ctrl-C), or
 * ending with a server still up, takes the servers its tests started along. Real bash processes; the server is a real
 * Node process listening on a loopback port, started the way mocha starts redis-server: a child of the test process.
 */
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { scaled } from '../helpers/calibration';
import { childEnv, finished, REPO_ROOT } from '../helpers/children';
import { useTempDir } from '../helpers/tempDir';

/** Listens on a free loopback port, then writes `{ pid, port }` to the file it is given, and serves until stopped. */
const SERVER = `
const server = require('node:net').createServer(socket => socket.end());
server.listen(0, '127.0.0.1', () => {
  const file = process.argv[1];
  require('node:fs').writeFileSync(file + '.tmp', JSON.stringify({ pid: process.pid, port: server.address().port }));
  require('node:fs').renameSync(file + '.tmp', file);
});
`;

interface Server {
  readonly pid: number;
  readonly port: number;
}

/** A suite script: sources scripts/suite-group.sh and runs, in its own group, a test process that starts the server. */
function suite(serverFile: string, then: string, afterwards = ''): ChildProcess {
  const testProcess = `node -e ${shellQuote(SERVER)} ${shellQuote(serverFile)} & ${then}`;
  const script = `source scripts/suite-group.sh\nin_own_group bash -c ${shellQuote(testProcess)}\n${afterwards}`;
  return spawn('bash', ['-c', script], { cwd: REPO_ROOT, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

async function serverUp(file: string, suiteProcess: ChildProcess): Promise<Server> {
  const deadline = Date.now() + scaled(20_000);
  while (!fs.existsSync(file)) {
    if (suiteProcess.exitCode !== null) throw new Error(`the suite exited ${suiteProcess.exitCode} before its server was up`);
    if (Date.now() > deadline) throw new Error('the server did not start');
    await new Promise(resolve => setTimeout(resolve, 20));
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Server;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('a suite takes the servers its tests started along (scripts/suite-group.sh)', function () {
  this.timeout(90_000);
  const tmp = useTempDir('lockstep-suite-group');
  const started: number[] = [];

  afterEach(() => {
    // A server the code under test left running is not left to the next test (or the machine).
    for (const pid of started.splice(0)) if (running(pid)) process.kill(pid, 'SIGKILL');
  });

  for (const [signal, status] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)
    it(`stops them when the suite is stopped by ${signal} while its tests run, and exits ${status}`, async () => {
      const file = path.join(tmp.path, 'server.json');
      const child = suite(file, 'wait');
      const done = finished(child, scaled(60_000));
      const server = await serverUp(file, child);
      started.push(server.pid);
      assert.equal(await refused(server.port), false, 'the server answers while the suite runs');
      child.kill(signal);
      const ended = await done;
      assert.equal(ended.code, status, ended.stderr);
      assert.equal(running(server.pid), false, 'the server process is gone');
      assert.equal(await refused(server.port), true, 'nothing answers on its port');
    });

  it("stops a server still running when the test command ends, before the suite's next command, and returns the command's status", async () => {
    const file = path.join(tmp.path, 'server.json');
    // The next command (chaos.sh runs several) looks for the server, then the suite exits with what in_own_group returned.
    const next = `rc=$?; if kill -0 "$(node -p 'require(process.argv[1]).pid' ${shellQuote(file)})"; then echo 'next command: the server runs'; else echo 'next command: no server'; fi; exit $rc`;
    const child = suite(file, `until [ -e ${shellQuote(file)} ]; do sleep 0.05; done; exit 7`, next);
    const ended = await finished(child, scaled(60_000));
    const server = JSON.parse(fs.readFileSync(file, 'utf8')) as Server;
    started.push(server.pid);
    assert.equal(ended.stdout, 'next command: no server\n', ended.stderr);
    assert.equal(ended.code, 7, ended.stderr);
    assert.equal(running(server.pid), false, 'the server process is gone');
    assert.equal(await refused(server.port), true, 'nothing answers on its port');
  });
});
