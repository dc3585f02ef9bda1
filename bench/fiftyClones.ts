/**
 * Fifty clones at once against one remote (issue 30): the requests the team's backend sees in an
 * hour, counted, on a simulated hour (one ManualClock for all fifty windows, the drivers' own watch
 * code: RemotePoller for git, RecordWatches for SQL, watchKeeper.ts for what the VS Code window adds).
 * Each window is one clone with one open VS Code window on the lock page.
 *
 *  - idle: nobody holds or waits
 *  - active: one holder (heartbeat every 10 min: a read and a write), 5 queued (the head polls fast, the four
 *    behind it slowly, as idle windows do: src/extension/windowInterest.ts), 44 idle
 *
 * A change of the page costs every window one read (fetch, SELECT, GET) when it hears of it; those
 * are counted as well. The remote answers at once (a counting stand-in for the forge or database);
 * the wall-clock cost of one request is measured by gitStore and sqlLeases, and fifty windows as real
 * processes against real backends by fiftyClonesLive.
 *
 *   npm run bench -- fiftyClones      (BENCH_CLONES=N)
 */
import { HOUR, ManualClock, MINUTE } from '../src/core/clock';
import { GIT_POLL_PACE, IDLE_INTEREST, type WatchInterest } from '../src/core/stores/pollPace';
import { RemotePoller } from '../src/core/stores/git/remotePoller';
import { RecordWatches } from '../src/core/stores/sql/recordWatch';
import type { Watch } from '../src/core/stores/store';
import { WatchKeeper } from '../src/extension/watchKeeper';
import { seededRandom } from '../test/helpers/simulatedPolls';
import { fmt, summaryRow, verdict } from './summary';

const CLONES = Number(process.env.BENCH_CLONES ?? 50);
const HEARTBEAT_MS = 10 * MINUTE;
const REF = 'refs/lockstep/bench/records/0';

type Driver = 'git' | 'MariaDB/SQLite' | 'PostgreSQL' | 'Redis' | 'file';
interface Count {
  polls: number;
  reads: number;
  writes: number;
}

/** One simulated hour of `CLONES` windows on `driver`; `active`: a holder heartbeating and 5 queued. */
async function hour(driver: Driver, active: boolean): Promise<Count> {
  const clock = new ManualClock();
  const random = seededRandom(driver.length * 31 + (active ? 7 : 3));
  const count: Count = { polls: 0, reads: 0, writes: 0 };
  let revision = 1;
  // Windows 1–5 are queued; only the head (1) waits for news at once (src/extension/windowInterest.ts), the others
  // poll at the slow pace as idle windows do.
  const interestOf = (i: number): WatchInterest => (!active ? IDLE_INTEREST : { holds: i === 0, waits: i === 1 });
  // Push drivers: every window hears each write at once.
  const pushListeners = new Set<() => void>();
  // Each clone is its own process: its own poller (git) or watch set (SQL), as in a real team.
  const pollers: RemotePoller[] = [];
  const newPoller = () => {
    const poller = new RemotePoller(
      async refs => {
        count.polls++;
        return new Map(refs.map(r => [r, String(revision).padStart(40, '0')]));
      },
      GIT_POLL_PACE,
      clock,
      random,
    );
    pollers.push(poller);
    return poller;
  };
  const newSql = () =>
    new RecordWatches(
      async () => {
        count.polls++;
        return String(revision);
      },
      { clock, random },
    );
  const pgFeed = new Set<(payload: string) => void>();
  const newPostgres = () =>
    new RecordWatches(
      async () => {
        count.polls++;
        return String(revision);
      },
      {
        clock,
        random,
        feed: {
          subscribe: (_channel, onNotify) => {
            pgFeed.add(onNotify);
            return { dispose: () => pgFeed.delete(onNotify) };
          },
          ready: async () => undefined,
          close: async () => undefined,
        },
      },
    );
  const open = (i: number, onChange: () => void): Watch => {
    switch (driver) {
      case 'git':
        return newPoller().watch(REF, onChange, String(revision).padStart(40, '0'), () => interestOf(i));
      case 'MariaDB/SQLite':
        return newSql().watch('k', onChange, { interest: () => interestOf(i) });
      case 'PostgreSQL':
        return newPostgres().watch('k', onChange, { interest: () => interestOf(i) });
      default: {
        pushListeners.add(onChange);
        return {
          live: { via: driver === 'Redis' ? 'pub/sub' : 'file watch', healthy: true, recovers: driver === 'Redis' },
          dispose: () => pushListeners.delete(onChange),
        };
      }
    }
  };
  const keepers = Array.from({ length: CLONES }, (_, i) => {
    const keeper = new WatchKeeper({
      open: async onChange => open(i, onChange),
      read: () => count.reads++,
      pollMs: () => 10_000,
      interest: () => interestOf(i),
      clock,
    });
    return keeper;
  });
  for (const k of keepers) await k.start();
  const write = () => {
    revision++;
    count.writes++;
    for (const l of pushListeners) l();
    for (const l of pgFeed) l(String(revision));
  };
  let nextBeat = active ? HEARTBEAT_MS : Number.POSITIVE_INFINITY;
  while (clock.monotonic() < HOUR) {
    for (let i = 0; i < 10; i++) await Promise.resolve();
    const next = Math.min(clock.nextTimerIn ?? HOUR, nextBeat - clock.monotonic(), HOUR - clock.monotonic());
    clock.advance(Math.max(next, 0));
    if (clock.monotonic() >= nextBeat) {
      count.reads++; // the holder's heartbeat reads, then writes
      write();
      nextBeat += HEARTBEAT_MS;
    }
  }
  for (const k of keepers) k.dispose();
  for (const p of pollers) p.close();
  return count;
}

async function main(): Promise<void> {
  console.log(`${CLONES} clones, one open window each, one simulated hour per row (requests the backend sees)`);
  console.log(
    '\n| driver | idle: polls / reads / total per hour | active (1 holder, 5 queued): polls / reads / writes / total per hour | per second, active |',
  );
  console.log('| --- | --- | --- | --- |');
  const total = (c: Count) => c.polls + c.reads + c.writes;
  const measured: { driver: Driver; idle: Count; busy: Count }[] = [];
  for (const driver of ['git', 'MariaDB/SQLite', 'PostgreSQL', 'Redis', 'file'] as const) {
    const idle = await hour(driver, false);
    const busy = await hour(driver, true);
    measured.push({ driver, idle, busy });
    console.log(
      `| ${driver} | ${idle.polls} / ${idle.reads} / **${total(idle)}** | ${busy.polls} / ${busy.reads} / ${busy.writes} / **${total(busy)}** | ${(total(busy) / 3600).toFixed(2)} |`,
    );
  }
  console.log(
    `\nbefore issue 30 (git: ls-remote every 2 s per window): ${CLONES * 1800} requests an hour, ${((CLONES * 1800) / 3600).toFixed(1)} a second`,
  );
  // The run-wide summary's row (bench/summary.ts), as README's: both hours per driver, and the target per idle window.
  const what: Record<Driver, string> = {
    git: ' `ls-remote`',
    'MariaDB/SQLite': ' reads',
    PostgreSQL: ' backup reads',
    Redis: '',
    file: '',
  };
  const perIdleWindow = measured.map(m => ({ driver: m.driver, requests: total(m.idle) / CLONES }));
  const most = perIdleWindow.reduce((a, b) => (b.requests > a.requests ? b : a));
  summaryRow({
    bench: 'fiftyClones',
    what: `requests the backend sees in a simulated hour from ${CLONES} open windows, one per clone (the drivers' own watch code on one ManualClock; a change costs each window one read)`,
    lockstep:
      `idle: ${measured.map(m => `${m.driver} ${fmt(total(m.idle))}${what[m.driver]}`).join('; ')}. ` +
      `One holder heartbeating and 5 queued (the head polls fast, the four behind it as idle windows do): ${measured
        .map(m => `${m.driver} ${fmt(total(m.busy))} (${fmt(total(m.busy) / 3600, 2)}/s)`)
        .join('; ')}`,
    baseline: `before issue 30: git ${fmt(CLONES * 1800)} an hour (${fmt((CLONES * 1800) / 3600, 1)} a second)`,
    target: `≤ 120 per idle window (most: ${most.driver} ${fmt(most.requests, 1)}): ${verdict(most.requests <= 120)}`,
  });
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
