import * as assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HOUR, ManualClock, MINUTE, SECOND } from '../../src/core/clock';
import { createFileDriver } from '../../src/core/stores/file';
import { watchDir, type OpenDirWatch } from '../../src/core/stores/fileWatch';
import { IDLE_INTEREST } from '../../src/core/stores/pollPace';
import type { RedisClient } from '../../src/core/stores/redis/clients';
import { RecordWatcher } from '../../src/core/stores/redis/watcher';
import type { Watch, WatchOptions } from '../../src/core/stores/store';
import { freshnessLine } from '../../src/extension/badge';
import { WatchKeeper } from '../../src/extension/watchKeeper';

const POLL_MS = 10 * SECOND;

/** A window's keeper on a ManualClock, counting the page reads it asks for besides the first. */
function keep(open: (onChange: () => void, options: WatchOptions) => Promise<Watch | undefined>) {
  const clock = new ManualClock();
  const reads: number[] = [];
  const keeper = new WatchKeeper({
    open,
    read: () => reads.push(clock.monotonic()),
    pollMs: () => POLL_MS,
    interest: () => IDLE_INTEREST,
    clock,
  });
  return { clock, reads, keeper };
}

/** ioredis's subscriber as far as RecordWatcher uses it: its events, and SUBSCRIBE answered at once. */
class Subscriber extends EventEmitter {
  subscribe(): Promise<number> {
    return Promise.resolve(1);
  }
  unsubscribe(): Promise<number> {
    return Promise.resolve(0);
  }
  disconnect(): void {}
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** Moves the clock to the monotonic instant `until`, timer by timer, letting each read's restart settle. */
async function runUntil(clock: ManualClock, until: number): Promise<void> {
  for (;;) {
    await flush();
    const left = until - clock.monotonic();
    if (left <= 0) return;
    const next = clock.nextTimerIn;
    clock.advance(next === undefined ? left : Math.min(next, left));
  }
}

/** Waits (real time, bounded) until `done` holds: a file-system event takes the event loop. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!done()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 5));
  }
}

describe('push watches (Redis, file): no periodic read while healthy, over a simulated hour', () => {
  it('Redis pub/sub: 0 reads in an idle hour; one read per message, per drop and per reconnection; polls only while down', async () => {
    const subscriber = new Subscriber();
    const watcher = new RecordWatcher(subscriber as unknown as RedisClient);
    const w = keep(async (onChange, options) => watcher.watch('ch', onChange, options.onHealth));
    await w.keeper.start();
    await flush();
    assert.equal(w.reads.length, 1, 'one read once the subscription is in place');
    subscriber.emit('ready');
    await runUntil(w.clock, HOUR);
    assert.equal(w.reads.length, 1, 'no read in an idle hour while subscribed');
    assert.equal(w.clock.pendingTimers, 0, 'no re-read timer while healthy');
    assert.equal(freshnessLine(w.keeper.freshness()), 'Updates: live: pub/sub, as they happen');

    subscriber.emit('message', 'ch');
    assert.equal(w.reads.length, 2, 'a change is one read');

    subscriber.emit('close');
    subscriber.emit('close');
    assert.equal(w.reads.length, 3, 'the drop is one read (messages may be lost from now on)');
    assert.deepEqual(w.keeper.freshness(), { withinMs: POLL_MS }, 'while down the tooltip states the poll bound');
    await runUntil(w.clock, HOUR + 10 * MINUTE);
    assert.equal(w.reads.length, 3 + 60, 'while down: one read per poll interval');

    subscriber.emit('ready');
    assert.equal(w.reads.length, 64, 'subscribed again: one read');
    await runUntil(w.clock, 3 * HOUR);
    assert.equal(w.reads.length, 64, 'healthy again: no read for the rest of the time');
    subscriber.emit('error', new Error('x'));
    assert.equal(w.reads.length, 65, 'any error of the subscriber: one read');
    w.keeper.dispose();
    assert.equal(w.clock.pendingTimers, 0);
  });

  it('file watch: 0 reads in an idle hour on a real folder; a write elsewhere is heard', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-keeper-'));
    const watching = createFileDriver({ path: root, prefix: 'p' });
    const writer = createFileDriver({ path: root, prefix: 'p' });
    const key = 'b'.repeat(64);
    try {
      const w = keep(async (onChange, options) => watching.watch?.(key, onChange, options));
      await w.keeper.start();
      await runUntil(w.clock, HOUR);
      assert.equal(w.reads.length, 0, 'no read in an idle hour');
      assert.equal(w.clock.pendingTimers, 0);
      assert.equal(freshnessLine(w.keeper.freshness()), 'Updates: live: file watch, as they happen');
      assert.deepEqual(await writer.compareAndSwap(key, null, { v: 1 }, { summary: 'x' }), {
        ok: true,
        revision: (await writer.read(key))?.revision,
      });
      await until(() => w.reads.length >= 1, 'the write to be heard');
      w.keeper.dispose();
    } finally {
      await watching.close();
      await writer.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('file watch: a failed watch is read at once, polled while down, and started again at the next read', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-keeper-'));
    const opened: EventEmitter[] = [];
    const open: OpenDirWatch = () => {
      const emitter = Object.assign(new EventEmitter(), { close: () => undefined });
      opened.push(emitter);
      return emitter;
    };
    try {
      const w = keep(async (onChange, options) => watchDir(root, onChange, options.onHealth, open));
      await w.keeper.start();
      await runUntil(w.clock, 30 * MINUTE);
      assert.equal(w.reads.length, 0);
      opened[0]?.emit('error', new Error('ENOSPC'));
      assert.equal(w.reads.length, 1, 'the failure is one read');
      assert.deepEqual(w.keeper.freshness(), { withinMs: POLL_MS });
      await runUntil(w.clock, 30 * MINUTE + POLL_MS);
      assert.equal(opened.length, 2, 'the next read starts a new watch');
      assert.equal(w.reads.length, 2, 'and reads once after it started');
      await runUntil(w.clock, 2 * HOUR);
      assert.equal(w.reads.length, 2, 'healthy again: no read');
      assert.equal(w.keeper.freshness().live, 'file watch');
      w.keeper.dispose();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('a file watch that cannot start again is retried at each read until it starts, then reads stop', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-keeper-'));
    const opened: EventEmitter[] = [];
    let refuse = 0;
    const open: OpenDirWatch = () => {
      const emitter = Object.assign(new EventEmitter(), { close: () => undefined });
      opened.push(emitter);
      return emitter;
    };
    try {
      const w = keep(async (onChange, options) => {
        if (refuse > 0) {
          refuse--;
          throw new Error('ENOSPC');
        }
        return watchDir(root, onChange, options.onHealth, open);
      });
      await w.keeper.start();
      refuse = 2;
      opened[0]?.emit('error', new Error('gone'));
      await runUntil(w.clock, 3 * POLL_MS);
      assert.equal(opened.length, 2, 'started again at the third read, after two refusals');
      assert.equal(w.reads.length, 1 + 3, 'the failure, then one read per poll interval until it started');
      await runUntil(w.clock, HOUR);
      assert.equal(w.reads.length, 4, 'then no read');
      w.keeper.dispose();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('no watch at all: the poll setting; a polling watch (git, SQL) is its own safety net', async () => {
    const none = keep(async () => undefined);
    await none.keeper.start();
    await runUntil(none.clock, HOUR);
    assert.equal(none.reads.length, HOUR / POLL_MS);
    none.keeper.dispose();
    const polling = keep(async () => ({ freshness: { idleMs: 36_000, activeMs: 2_000 }, dispose: () => undefined }));
    await polling.keeper.start();
    await runUntil(polling.clock, HOUR);
    assert.equal(polling.reads.length, 0, 'the keeper adds no read to a polling watch');
    assert.deepEqual(polling.keeper.freshness(), { withinMs: 36_000, activeWithinMs: 2_000 });
  });
});
