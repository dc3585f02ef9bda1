/**
 * Connection handling that needs no running server: credentials never reach an error or the
 * command line's output, connections open lazily, and the configured timeouts bound a silent
 * server. Registered in the SQLite run (the run that always happens) and in a run with no live target (runsServerlessTests),
 * for both server schemes.
 */
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { inspect } from 'node:util';
import { LockBackendError, LockConfigurationError, exitCodeFor } from '../../../src/core/errors';
import { createLockManager } from '../../../src/core/leases';
import { runTs } from '../../helpers/children';
import { runsServerlessTests, tsChildEnv } from './sqlLive';

const USER = 'lockuser7Q';
const PASSWORD = 'S3cret-pw-9XZ';

/** A port on loopback that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>(resolve => server.close(() => resolve()));
  return port;
}

/** A loopback server that accepts connections and never says a word; counts the connections. */
async function silentServer(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer(socket => {
    count++;
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => count,
    close: () =>
      new Promise<void>(resolve => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function assertNoCredentials(text: string): void {
  assert.ok(!text.includes(PASSWORD), `password leaked: ${text}`);
  assert.ok(!text.includes(USER), `user leaked: ${text}`);
}

if (runsServerlessTests) {
  describe('sql driver: credentials, laziness and timeouts (no server needed)', function () {
    this.timeout(30_000);

    for (const scheme of ['mysql', 'mariadb', 'postgres', 'postgresql']) {
      it(`${scheme}: an unreachable server gives LockBackendError (exit 4) that shows no credentials`, async () => {
        const port = await closedPort();
        const m = createLockManager({
          driver: 'sql',
          prefix: 'cred',
          databaseUrl: `${scheme}://${USER}:${PASSWORD}@127.0.0.1:${port}/lockstep_x`,
          connectTimeoutMs: 1_000,
          env: {},
        });
        await assert.rejects(m.acquire('anything'), (error: unknown) => {
          assert.ok(error instanceof LockBackendError, inspect(error));
          assert.equal(exitCodeFor(error), 4);
          assert.match(error.message, /unreachable/);
          assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
          assertNoCredentials(`${error.message}\n${error.stack}\n${inspect(error, { depth: 6 })}\n${JSON.stringify(error)}`);
          return true;
        });
        await m.close();
      });
    }

    it('the command line prints no credentials for an unreachable database, with or without --json', async () => {
      const port = await closedPort();
      const env = tsChildEnv({
        LOCKSTEP_DRIVER: 'sql',
        LOCKSTEP_PREFIX: 'cred',
        LOCKSTEP_DATABASE_URL: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/lockstep_x`,
      });
      for (const json of [[], ['--json']]) {
        const run = await runTs('src/cli/main.ts', [...json, 'run', 'job', '--', 'true'], env);
        assert.equal(run.code, 4, run.stderr);
        assertNoCredentials(run.stdout + run.stderr);
        if (json.length > 0) assert.equal(JSON.parse(run.stdout).error.code, 'backend');
      }
    });

    it('an invalid URL is a configuration error that does not repeat the URL', async () => {
      const m = createLockManager({ driver: 'sql', prefix: 'cred', databaseUrl: `postgres://${USER}:${PASSWORD}@[::1/db`, env: {} });
      await assert.rejects(m.acquire('anything'), (error: unknown) => {
        assert.ok(error instanceof LockConfigurationError, inspect(error));
        assertNoCredentials(`${error.message}\n${inspect(error, { depth: 6 })}`);
        return true;
      });
    });

    it('creating a manager opens no connection; the first operation does, bounded by the connect timeout', async () => {
      for (const scheme of ['mysql', 'postgres']) {
        const server = await silentServer();
        try {
          const m = createLockManager({
            driver: 'sql',
            prefix: 'lazy',
            databaseUrl: `${scheme}://${USER}:${PASSWORD}@127.0.0.1:${server.port}/lockstep_x`,
            connectTimeoutMs: 300,
            commandTimeoutMs: 300,
            env: {},
          });
          assert.equal(server.connections(), 0, `${scheme}: no connection before the first operation`);
          await assert.rejects(m.acquire('anything'), (error: unknown) => {
            assert.ok(error instanceof LockBackendError, `${scheme}: ${inspect(error)}`);
            assertNoCredentials(inspect(error, { depth: 6 }));
            return true;
          });
          assert.ok(server.connections() >= 1, `${scheme}: the operation connected`);
          await m.close();
        } finally {
          await server.close();
        }
      }
    });

    it('a shared database needs an explicit prefix', async () => {
      for (const url of [`mysql://u@127.0.0.1:1/db`, `postgres://u@127.0.0.1:1/db`]) {
        const m = createLockManager({ driver: 'sql', databaseUrl: url, env: {} });
        await assert.rejects(
          m.acquire('anything'),
          (error: unknown) => error instanceof LockConfigurationError && error.setting === 'prefix',
        );
      }
    });

    it('requireDistributed accepts MySQL and PostgreSQL (the error is the outage, not the configuration)', async () => {
      for (const scheme of ['mysql', 'postgres']) {
        const port = await closedPort();
        const m = createLockManager({
          driver: 'sql',
          prefix: 'dist',
          requireDistributed: true,
          databaseUrl: `${scheme}://u@127.0.0.1:${port}/db`,
          connectTimeoutMs: 1_000,
          env: {},
        });
        await assert.rejects(m.acquire('anything'), LockBackendError);
        await m.close();
      }
    });
  });
}
