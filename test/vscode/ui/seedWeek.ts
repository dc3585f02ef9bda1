// Gives a fresh container a week of real history for the timeline's UI test: real transitions through core's
// Container on the real file store, from bob's clone as several people, with only the clock injected (a
// ManualClock starting six and a half days ago), so the audit's times spread over the week.
// usage: node --import tsx test/vscode/ui/seedWeek.ts CLONE   (LOCKSTEP_PATH names the store)
import { HOUR, MINUTE, ManualClock } from '../../../src/core/clock';
import { Container } from '../../../src/core/container/container';

const clone = process.argv[2];
if (!clone) throw new Error('usage: seedWeek.ts CLONE');
const DAY = 24 * HOUR;
const clock = new ManualClock(Date.now() - 6.5 * DAY);

async function as<T>(identity: string, action: (c: Container) => Promise<T>): Promise<T> {
  const c = await Container.open({ cwd: clone, env: { ...process.env, LOCKSTEP_IDENTITY: identity }, clock });
  try {
    return await action(c);
  } finally {
    await c.close();
  }
}
const hold = (identity: string, hours: number) => as(identity, c => c.acquire({ ttl: hours * 3600 }));
const release = (identity: string) => as(identity, c => c.release());
const until = (ms: number) => clock.advance(ms);

const BOB = 'bob@example.com',
  CAROL = 'carol@example.com',
  DANA = 'dana@example.com',
  OPS = 'ops@example.com';

async function main(): Promise<void> {
  await hold(BOB, 4);
  until(3 * HOUR);
  await release(BOB);
  until(14 * HOUR);
  await hold(CAROL, 3);
  until(30 * MINUTE);
  await as(BOB, c => c.petition('the parser'));
  until(90 * MINUTE);
  await release(CAROL);
  until(10 * MINUTE);
  await hold(BOB, 6);
  until(5 * HOUR);
  await release(BOB);
  until(30 * HOUR);
  await hold(DANA, 2);
  until(6 * HOUR);
  await as(OPS, c => c.clear('laptop died on the train'));
  until(18 * HOUR);
  await hold(CAROL, 6);
  until(5 * HOUR);
  await release(CAROL);
  until(19 * HOUR);
  await hold(BOB, 2);
  until(4 * HOUR);
  await hold(CAROL, 3);
  until(2 * HOUR);
  await release(CAROL);
  until(18 * HOUR);
  await hold(DANA, 5);
  until(1 * HOUR);
  await as(CAROL, c => c.petition());
  until(3 * HOUR);
  await release(DANA);
  until(10 * MINUTE);
  await hold(CAROL, 3);
  until(150 * MINUTE);
  await release(CAROL);
  if (clock.now() > Date.now()) throw new Error('the seeded week ran past now');
  console.log(`seeded a week of history up to ${new Date(clock.now()).toISOString()}`);
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
