/**
 * One clone's open window for bench/fiftyClonesLive.ts, as a process of its own: what the extension's
 * ContainerModel runs for a workspace folder (src/extension/containerModel.ts) without VS Code — the
 * container opened in the clone, the driver's watch kept by the extension's own WatchKeeper (git:
 * RemotePoller's `ls-remote`; SQL: RecordWatches, PostgreSQL with LISTEN; Redis pub/sub; file watch;
 * etcd watch), each change or poll answered by one read of the page (coalesced, as the model's
 * refresh), and the window's interest (fast while queued) from the last read.
 *
 * The bench bundles this file with esbuild and forks it (no tsx at run time). Messages over the IPC
 * channel: the parent sends `petition` (once) and `stop`; the child answers `ready`, `petitioned`
 * (ok, or the error's code and message) and, at stop, `stats`. The child exits when the parent's
 * channel closes, so a bench that dies leaves no window behind.
 *
 *   argv: <clone folder>      environment: the container's LOCKSTEP_* settings
 */
import { systemClock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import { LockError } from '../../src/core/errors';
import { hasTurn, type LockStatus } from '../../src/core/lockStatus';
import { interestFor, settleMsFor } from '../../src/extension/windowInterest';
import { WatchKeeper } from '../../src/extension/watchKeeper';

/** The extension's `lockstep.pollSeconds` default: the pace while a watch has no live path. */
const POLL_MS = 10_000;
const QUEUED_FAST = process.env.BENCH_QUEUED_FAST === '1';
const SETTLE_MS = process.env.BENCH_SETTLE_MS === undefined ? undefined : Number(process.env.BENCH_SETTLE_MS);

type Message = { type: 'petition' } | { type: 'stop' };

const send = (message: object) => process.send?.(message);

async function main(): Promise<void> {
  const cwd = process.argv[2];
  if (!cwd) throw new Error('usage: cloneWindow <clone folder>');
  const container = await Container.open({ cwd });
  let status: LockStatus | undefined;
  let askedAt: number | undefined;
  let keeper: WatchKeeper | undefined;
  let reads = 0;
  let reading: Promise<void> | undefined;
  let again = false;
  // The model's refresh: one read at a time; a change heard during a read asks for one more after it.
  const refresh = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        reads++;
        try {
          status = await container.status();
          // Holding or waiting now (or no longer): a polling watch re-decides its pace, as the model does.
          keeper?.nudge();
        } catch {
          // The window shows "offline" and reads again at the next change or poll.
        }
      } while (again);
      reading = undefined;
    })();
    return reading;
  };
  await refresh();
  keeper = new WatchKeeper({
    open: (onChange, options) => container.watch(onChange, options),
    read: () => void refresh(),
    // The extension's pause before a bystander reads a change (windowInterest.ts); BENCH_SETTLE_MS=N replaces its longest
    // pause by N ms (0: every change read at once, as before issue 30's settle).
    settleMs: () => {
      const ms = settleMsFor(status);
      return SETTLE_MS === undefined || ms === 0 ? ms : SETTLE_MS;
    },
    pollMs: () => POLL_MS,
    // The extension's interest (windowInterest.ts: fast polls for the holder, the queue head and a window whose turn it
    // is); BENCH_QUEUED_FAST=1: every queued window polls fast, as before issue 30's change.
    interest: () =>
      QUEUED_FAST
        ? {
            holds: false,
            waits: status !== undefined && (status.position > 0 || hasTurn(status)),
            ...(askedAt !== undefined ? { askedAt } : {}),
          }
        : interestFor(status, askedAt),
    clock: systemClock,
  });
  await keeper.start();
  const started = keeper;
  const stop = async (code: number) => {
    started.dispose();
    await container.close().catch(() => undefined);
    process.exit(code);
  };
  process.on('disconnect', () => void stop(0));
  process.on('message', (message: Message) => {
    if (message.type === 'stop') {
      send({ type: 'stats', reads });
      void stop(0);
      return;
    }
    void (async () => {
      // The window's Petition action (the model's act: the user asked, so a polling watch turns fast), then a read.
      askedAt = Date.now();
      started.nudge();
      try {
        const { position } = await container.petition();
        send({ type: 'petitioned', ok: true, position });
      } catch (error) {
        const code = error instanceof LockError ? error.code : 'unexpected';
        send({ type: 'petitioned', ok: false, error: `${code}: ${error instanceof Error ? error.message : String(error)}` });
      }
      await refresh();
    })();
  });
  send({ type: 'ready', watching: started.watching });
}

main().catch(error => {
  send({ type: 'failed', error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
