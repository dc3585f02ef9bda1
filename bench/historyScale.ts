/**
 * Cost as the git driver's lock page grows old (issue 30): the same operations on a lock ref with
 * 100 transitions and with BENCH_HISTORY_N (default 10,000; the issue's figure is 100,000, a run of
 * some minutes) in ONE run, each printed as a ratio to its cost at 100 (target ≤ 1.3×):
 *
 *  - one transition           `lockstep petition` then `withdraw` (each a CLI process: read, commit, push)
 *  - the server guard's check the pre-receive guard's own run for that push (a wrapper times the hook)
 *  - `status`                 in a clone after another clone's transition (one new commit to fetch)
 *  - `status --remote URL`    the page read from the remote without a clone
 *  - a fresh clone's first read `status` in a new clone: the lock ref's history is fetched
 *  - the timeline             the lock page's history read (its 2,000 newest entries, from the record the window
 *                             read) and buildTimeline, in a new window: in a clone that read the history before
 *                             (its parsed entries kept in .git/lockstep), and in one that never did
 *
 * and the page size (bytes of record.json) with 100 petitioners, 1,000 leased ranges and 100 blocks,
 * built with the pure transition functions (target ≤ 64 KB).
 *
 * Both histories are built first and then measured in turns, a round on each (the first of the two alternates), so that
 * a change in the machine's load during the run weighs on both sides of each ratio.
 *
 * The old history is built quickly: a real team (createFencingTeam: a bare remote with the server
 * guard, the git driver, real CLI processes) makes the first transitions; then `git fast-import`
 * appends a chain of petition/withdraw transitions, each record made by the pure transition functions
 * from the one before (its audit line, commit subject, author and date as the driver writes them),
 * with the snapshots that automatic compaction leaves (one per AUTO_COMPACT_AFTER writes, its audit.log
 * the newest AUDIT_LOG_KEEP entries, made by auditHistory.ts's own functions). The history ends with
 * the longest chain a page has on its last snapshot (just below the bound, so that the measured
 * writes cross none): the worst case for a fresh clone and `status --remote`. One `lockstep compact`
 * at the end measures what the write that reaches the bound pays.
 * The page is unsigned (no allowedSigners): a signed chain would need one signature per step.
 *
 *   npm run bench -- historyScale      (BENCH_HISTORY_N=100000 for the issue's size; BENCH_HISTORY_OPS=N)
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import { Container } from '../src/core/container/container';
import { type AuditLine, type LockRecord, type Outcome, petition, withdraw } from '../src/core/lockRecord';
import { AUDIT_LOG_KEEP, AUTO_COMPACT_AFTER, type AuditEntry, auditLogText, lineEntry } from '../src/core/stores/git/auditHistory';
import { packPage } from '../src/core/stores/packedPage';
import { SNAPSHOT_TRAILER, WRITE_TRAILER } from '../src/core/stores/git/gitRefs';
import { compactionSubject, lastAuditLine, stampOf, transitionSubject } from '../src/core/stores/git/recordCommit';
import { auditFromHistory, buildTimeline, longerAudit } from '../src/core/timeline';
import { crowdedPage, crowdedSignedWindow } from '../test/helpers/crowdedPage';
import { createFencingTeam, type FencingTeam } from '../test/helpers/fencingFixture';
import { fmt, summaryRow, times, verdict } from './summary';

const BIG = Number(process.env.BENCH_HISTORY_N ?? 10_000);
const SMALL = 100;
const OPS = Number(process.env.BENCH_HISTORY_OPS ?? 7);
const HISTORY_LIMIT = 2000;
const FRESH = Number(process.env.BENCH_HISTORY_FRESH ?? 5);

interface Figures {
  transition: number;
  guard: number;
  status: number;
  statusRemote: number;
  freshClone: number;
  /** The lock page's timeline in a new window of a clone that read the history before (parsedHistory.ts keeps it). */
  timeline: number;
  /** The same in a clone that never read it. */
  timelineFirst: number;
  draw: number;
  refCommits: number;
  /** The automatic compactions (snapshots) the built history went through. */
  snapshots: number;
  /** `lockstep compact` (what one write in AUTO_COMPACT_AFTER pays), and the guard's check of its snapshot. */
  compaction: number;
  compactionGuard: number;
}

const median = (all: number[]): number => {
  const xs = all.filter(x => !Number.isNaN(x));
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

function ok<T>(outcome: Outcome<T>): LockRecord {
  if (!outcome.ok) throw new Error(`a transition was refused: ${outcome.error.message}`);
  return outcome.record;
}

/** Failures by operation (a git timeout at a large N is a finding, not a crash of the bench). */
const failures = new Map<string, string>();

async function timed(run: () => Promise<unknown>, what = 'operation'): Promise<number> {
  const start = performance.now();
  try {
    await run();
  } catch (error) {
    failures.set(
      what,
      `${error instanceof Error ? error.message.split('\n')[0].slice(0, 300) : String(error)} (after ${((performance.now() - start) / 1000).toFixed(1)} s)`,
    );
    return Number.NaN;
  }
  return performance.now() - start;
}

/** git's object name (SHA-1) of an object of `type` with `body`: what fast-import names it, known before it is written. */
function objectName(type: string, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** The tree of a record commit: its files by name, sorted as git sorts a tree. */
function treeName(files: Record<string, string>): string {
  const entries = Object.keys(files)
    .sort()
    .map(name =>
      Buffer.concat([Buffer.from(`100644 ${name}\0`), Buffer.from(objectName('blob', Buffer.from(files[name], 'utf8')), 'hex')]),
    );
  return objectName('tree', Buffer.concat(entries));
}

/**
 * Appends `count` transitions (petition, withdraw, …) to `ref` in the bare `remote`, from its tip, and the
 * snapshots that automatic compaction leaves on the way (container.ts): once a write leaves `bound` commits
 * on the last snapshot, a parentless snapshot holding the record unchanged and the newest AUDIT_LOG_KEEP
 * entries (auditHistory.ts: lineEntry, auditLogText, compactionSubject; the same functions the writer
 * uses). `lastChain`: how many commits lie on the last snapshot when it ends (the first snapshot comes
 * early enough for that), so that the operations measured after it run on the longest chain a page ever
 * has and cross no bound. `entries`: the page's audit entries so far, newest first (its real history).
 * Only the last snapshot and the chain on it are written: every commit is named as git names it (its
 * object computed here), and what came before a snapshot is unreachable from the ref, so the remote's
 * gc drops it (as a real remote's does). The written tip is checked to be the commit computed.
 */
async function appendHistory(
  remote: string,
  ref: string,
  count: number,
  bound: number,
  lastChain: number,
  entries: AuditEntry[],
  onChain: number,
): Promise<{ snapshots: number }> {
  let parent = execFileSync('git', ['-C', remote, 'rev-parse', ref], { encoding: 'utf8' }).trim();
  const start = parent;
  let record = JSON.parse(execFileSync('git', ['-C', remote, 'show', `${parent}:record.json`], { encoding: 'utf8' })) as LockRecord;
  let now = Math.max(Date.now() - 30 * 24 * 3600_000, record.audit.at(-1)?.at ?? 0);
  // Oldest first, trimmed to the newest AUDIT_LOG_KEEP now and then.
  let kept = [...entries].reverse();
  const child = spawn('git', ['-C', remote, 'fast-import', '--quiet', '--force', '--done'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>(resolve => child.on('close', resolve));
  const write = (text: string) =>
    child.stdin.write(text) ? Promise.resolve() : new Promise<void>(r => child.stdin.once('drain', () => r()));
  // What fast-import gets: the commits from the last snapshot on (a snapshot starts it afresh).
  let pending: string[] = [];
  /** One commit; returns its name, as fast-import will store it. */
  const commit = (files: Record<string, string>, from: string | null, line: AuditLine, subject: string, trailers: string[]) => {
    const stamp = stampOf(line);
    const person = `${stamp.ident} <${stamp.ident}> ${stamp.seconds} +0000`;
    const message = `${subject}\n\n${[`${WRITE_TRAILER}: ${randomBytes(8).toString('hex')}`, ...trailers].join('\n')}\n`;
    const header = `tree ${treeName(files)}\n${from === null ? '' : `parent ${from}\n`}author ${person}\ncommitter ${person}\n\n`;
    const sha = objectName('commit', Buffer.from(header + message, 'utf8'));
    const body = Object.entries(files)
      .map(([name, text]) => `M 100644 inline ${name}\ndata ${Buffer.byteLength(text)}\n${text}\n`)
      .join('');
    const reset = from === null ? `reset ${ref}\n` : '';
    // deleteall: each commit's tree is exactly its files (a transition after a snapshot holds no audit.log).
    // The branch goes on from its own last commit; only the first names its parent (a commit already in the repository).
    const fromLine = from === start ? `from ${from}\n` : '';
    if (from === null) pending = [];
    pending.push(
      `${reset}commit ${ref}\nauthor ${person}\ncommitter ${person}\ndata ${Buffer.byteLength(message)}\n${message}${fromLine}deleteall\n${body}`,
    );
    return sha;
  };
  // The first snapshot comes when the chain is `first` long, then every `bound`: the last chain is `lastChain` long.
  const first = count + onChain <= lastChain ? Infinity : ((count + onChain - lastChain - 1) % bound) + 1;
  let chain = onChain;
  let snapshots = 0;
  for (let i = 0; i < count; i++) {
    now += 1000;
    const who = `member-${i % 40}@example.com`;
    const outcome =
      i % 2 === 0 ? petition(record, { identity: who }, now) : withdraw(record, { identity: `member-${(i - 1) % 40}@example.com` }, now);
    record = ok(outcome);
    const json = JSON.stringify(record);
    const line = lastAuditLine(record) as AuditLine;
    parent = commit({ 'record.json': json }, parent, line, transitionSubject(line), []);
    kept.push(lineEntry(parent, line));
    chain++;
    if (chain >= (snapshots === 0 ? first : bound)) {
      kept = kept.slice(-AUDIT_LOG_KEEP);
      const newestFirst = [...kept].reverse();
      parent = commit({ 'audit.log': auditLogText(newestFirst), 'record.json': json }, null, line, compactionSubject(kept.length), [
        `${SNAPSHOT_TRAILER}: ${kept.length}`,
      ]);
      chain = 0;
      snapshots++;
    }
  }
  for (const text of pending) await write(text);
  await write('done\n');
  child.stdin.end();
  if ((await exited) !== 0) throw new Error('git fast-import failed');
  const tip = execFileSync('git', ['-C', remote, 'rev-parse', ref], { encoding: 'utf8' }).trim();
  if (tip !== parent) throw new Error(`the history built is not the one computed (${tip} ≠ ${parent})`);
  return { snapshots };
}

/** Replaces the remote's pre-receive hook by one that runs it and appends its own duration (ns) to `log`. */
function timeTheGuard(remote: string, log: string): void {
  const hooks = execFileSync('git', ['-C', remote, 'rev-parse', '--git-path', 'hooks'], { encoding: 'utf8' }).trim();
  const dir = path.isAbsolute(hooks) ? hooks : path.join(remote, hooks);
  const hook = path.join(dir, 'pre-receive');
  fs.renameSync(hook, `${hook}.timed`);
  fs.writeFileSync(
    hook,
    `#!/bin/sh\ninput=$(cat)\nstart=$(date +%s%N)\nprintf '%s\\n' "$input" | "${hook}.timed" "$@"\ncode=$?\nend=$(date +%s%N)\necho $((end - start)) >> "${log}"\nexit $code\n`,
    { mode: 0o755 },
  );
}

/** One history built and ready to measure: its team, and the samples its rounds gathered so far. */
interface Scene {
  readonly total: number;
  readonly team: FencingTeam;
  readonly must: (dir: string, args: string[]) => Promise<unknown>;
  /** The pre-receive guard's durations (ns), one line per run (timeTheGuard). */
  readonly guardLog: string;
  readonly refCommits: number;
  readonly snapshots: number;
  readonly samples: {
    transition: number[];
    status: number[];
    statusRemote: number[];
    freshClone: number[];
    timeline: number[];
    timelineFirst: number[];
    draw: number[];
  };
  fresh: number;
}

/** Builds the lock ref's history of `total` transitions behind a real team, and lets both clones catch up (untimed). */
async function prepareAt(total: number): Promise<Scene> {
  const team: FencingTeam = await createFencingTeam({ members: ['lead', 'ana'], operators: ['lead'], driver: 'git' });
  try {
    const [lead, ana] = team.members;
    // Git commands may take longer than the default 36 s here: a clone's first fetch of a long history
    // does (the fresh-clone row says by how much); the timeout would hide the figure.
    const must = async (dir: string, args: string[]) => {
      const r = await team.lockstep(dir, args, { env: { LOCKSTEP_GIT_TIMEOUT_SECONDS: '600' }, timeoutMs: 900_000 });
      if (r.code !== 0) throw new Error(`lockstep ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
      return r;
    };
    await must(lead.dir, ['acquire']);
    await must(lead.dir, ['release']);
    const ref = execFileSync('git', ['-C', team.remote, 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' })
      .split('\n')
      .find(r => r.includes('record'));
    if (!ref) throw new Error('no record ref on the remote');
    const count = () => Number(execFileSync('git', ['-C', team.remote, 'rev-list', '--count', ref], { encoding: 'utf8' }).trim());
    const built = performance.now();
    // The page's real history so far (its creation, the acquire and the release), which the snapshots keep too.
    const opened = await Container.open({ cwd: lead.dir, env: team.env });
    const entries = (await opened.history(Infinity)) ?? [];
    await opened.close();
    const onChain = count() - 1;
    // The measured writes (a petition and a withdrawal per round) must not reach the bound: they run on the longest chain below it.
    const lastChain = AUTO_COMPACT_AFTER - 2 * (OPS + 1) - 2;
    const { snapshots } = await appendHistory(
      team.remote,
      ref,
      Math.max(0, total - onChain - 1),
      AUTO_COMPACT_AFTER,
      lastChain,
      entries,
      onChain,
    );
    execFileSync('git', ['-C', team.remote, 'gc', '--quiet', '--prune=now'], { stdio: 'ignore' });
    const buildMs = performance.now() - built;
    const refCommits = count();
    console.log(
      `  ${total} transitions built in ${(buildMs / 1000).toFixed(1)} s (fast-import + gc): ${snapshots} automatic compactions, ${refCommits} commits on the lock ref now`,
    );
    const guardLog = path.join(team.root, 'guard-times');
    timeTheGuard(team.remote, guardLog);
    // Each clone fetches the old history once (untimed): the figures are those of a clone that keeps up.
    const caughtUp = await timed(() => must(lead.dir, ['status']), `first status after the history was appended, at ${total}`);
    console.log(`  a clone's first read after the history was appended: ${(caughtUp / 1000).toFixed(1)} s`);
    await must(ana.dir, ['status']);
    const samples = { transition: [], status: [], statusRemote: [], freshClone: [], timeline: [], timelineFirst: [], draw: [] };
    return { total, team, must, guardLog, refCommits, snapshots, samples, fresh: 0 };
  } catch (error) {
    team.dispose();
    throw error;
  }
}

/** One round of the everyday operations: a petition, `status` in the other clone, `status --remote`, the withdrawal. */
async function opsRound(scene: Scene, warmUp: boolean): Promise<void> {
  const { team, must, total, samples } = scene;
  const [lead, ana] = team.members;
  const t1 = await timed(() => must(ana.dir, ['petition']));
  const s = await timed(() => must(lead.dir, ['status']));
  const r = await timed(() => must(lead.dir, ['status', '--remote', team.remoteUrl]), `status --remote URL at ${total}`);
  const t2 = await timed(() => must(ana.dir, ['withdraw']));
  if (warmUp) return;
  samples.transition.push(t1, t2);
  samples.status.push(s);
  samples.statusRemote.push(r);
}

/** A new clone of the remote (untimed), and its first `status`, which fetches the lock ref's history. */
async function freshRound(scene: Scene): Promise<void> {
  const { team, must, total } = scene;
  // --no-local: a clone by path would hard-link every object of the remote, the lock ref's history too.
  const dir = path.join(team.root, `fresh-${scene.fresh++}`);
  execFileSync('git', ['clone', '--quiet', '--no-local', team.remoteUrl, dir], { env: team.env, stdio: 'ignore' });
  execFileSync('git', ['-C', dir, 'config', 'user.email', 'fresh@example.com'], { env: team.env });
  scene.samples.freshClone.push(await timed(() => must(dir, ['status']), `fresh clone's first read at ${total}`));
}

/**
 * The lock page's timeline: its history read (newest HISTORY_LIMIT entries, from the record the window read for its
 * badge: no fetch) and drawn, as a window that opens the page does it: a new Container each time. `timelineFirst`: in
 * a clone that never read the history (nothing kept in .git/lockstep, parsedHistory.ts); `timeline`: in a clone that
 * read it before (a new window, or another command).
 */
async function timelineRound(scene: Scene): Promise<void> {
  const { team, total, samples } = scene;
  const [lead] = team.members;
  const kept = path.join(lead.dir, '.git', 'lockstep');
  for (const f of fs.existsSync(kept) ? fs.readdirSync(kept) : []) if (f.startsWith('history-')) fs.rmSync(path.join(kept, f));
  const openPage = async () => {
    const container = await Container.open({ cwd: lead.dir, env: { ...team.env, LOCKSTEP_GIT_TIMEOUT_SECONDS: '600' } });
    try {
      // The window read the record for its badge when it opened; the page waits for the history read and the draw.
      const { record, revision } = await container.read();
      return await timed(async () => {
        const entries = await container.history(HISTORY_LIMIT, revision);
        const drawn = performance.now();
        const audit = longerAudit(record.audit, entries ? auditFromHistory(entries) : undefined);
        buildTimeline({ audit, holder: record.holder, leaseTtlMs: container.settings.leaseTtlMs, now: Date.now() });
        samples.draw.push(performance.now() - drawn);
        if (entries === undefined || entries[0]?.revision !== revision) throw new Error('the history does not start at the record read');
      }, `the timeline at ${total}`);
    } finally {
      await container.close();
    }
  };
  samples.timelineFirst.push(await openPage());
  samples.timeline.push(await openPage());
}

/** One compaction, as a write past the bound runs it (once per AUTO_COMPACT_AFTER writes), the guard's check of it, and the medians. */
async function finish(scene: Scene): Promise<Figures> {
  const { team, must, total, samples, guardLog } = scene;
  const guardLines = () => fs.readFileSync(guardLog, 'utf8').trim().split('\n');
  // The first two runs are the warm-up round's petition and withdrawal.
  const guardNs = guardLines().map(Number).slice(2);
  const guardRuns = guardLines().length;
  const compaction = await timed(() => must(team.members[0].dir, ['compact']), `compaction at ${total}`);
  const compactionGuard = Number(guardLines()[guardRuns] ?? Number.NaN) / 1e6;
  return {
    compaction,
    compactionGuard,
    transition: median(samples.transition),
    guard: median(guardNs) / 1e6,
    status: median(samples.status),
    statusRemote: median(samples.statusRemote),
    freshClone: median(samples.freshClone),
    timeline: median(samples.timeline),
    timelineFirst: median(samples.timelineFirst),
    draw: median(samples.draw),
    refCommits: scene.refCommits,
    snapshots: scene.snapshots,
  };
}

/**
 * Both histories measured in ONE interleaved run: each round of each operation runs on one history and then the
 * other (which one first alternates), so that what the machine does meanwhile (another process, a frequency change)
 * weighs on both sides of a ratio alike instead of on one phase of the run.
 */
async function measureBoth(): Promise<{ small: Figures; big: Figures }> {
  const small = await prepareAt(SMALL);
  let big: Scene | undefined;
  try {
    big = await prepareAt(BIG);
    const both = (i: number): Scene[] => (i % 2 === 0 ? [small, big!] : [big!, small]);
    for (let i = 0; i < OPS + 1; i++) for (const scene of both(i)) await opsRound(scene, i === 0);
    for (let i = 0; i < FRESH; i++) for (const scene of both(i)) await freshRound(scene);
    for (let i = 0; i < OPS; i++) for (const scene of both(i)) await timelineRound(scene);
    return { small: await finish(small), big: await finish(big) };
  } finally {
    small.team.dispose();
    big?.team.dispose();
  }
}

function signedWindowSize(): { steps: number; json: number; stored: number } {
  const { steps, envelope } = crowdedSignedWindow();
  return {
    steps: steps.length,
    json: Buffer.byteLength(JSON.stringify(envelope)),
    stored: Buffer.byteLength(JSON.stringify(packPage(envelope, 'bench'))),
  };
}

/** The crowded page (test/helpers/crowdedPage.ts): its JSON, its parts, and what git and the store-backed drivers keep of it. */
function crowdedPageSizes(): {
  bytes: number;
  stored: number;
  packed: number;
  signed: string;
  signedWindow: { steps: number; json: number; stored: number };
  parts: Record<string, number>;
} {
  const r = crowdedPage();
  const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
  const json = JSON.stringify(r);
  const signedWindow = signedWindowSize();
  return {
    bytes: size(r),
    // What the git driver sends and packs: record.json as a blob, zlib-deflated at git's pack level (core.compression 6); a loose object is deflated faster (level 1), about a fifth larger.
    stored: deflateSync(`blob ${Buffer.byteLength(json)}\0${json}`).length,
    // What the file, SQL, Redis and etcd drivers store (packedPage.ts).
    packed: size(packPage(r, 'bench')),
    // A signed page (allowedSigners) on those drivers keeps a window of steps, each repeating the record but its audit.
    signed: `${signedWindow.steps} steps, ${signedWindow.json} bytes of JSON, stored in ${signedWindow.stored}`,
    signedWindow,
    parts: { queue: size(r.queue), ranges: size(r.ranges), blocks: size(r.blocks), audit: size(r.audit), auditLines: r.audit.length },
  };
}

async function main(): Promise<void> {
  // First: it takes no time, and a long run at a large N may end before the rest.
  const page = crowdedPageSizes();
  const verdict = (n: number) => `${n} bytes (${(n / 1024).toFixed(1)} KiB; target ≤ 64 KiB: ${n <= 64 * 1024 ? 'met' : 'MISSED'})`;
  console.log(
    `page with 100 petitioners, 1,000 leased ranges, 100 blocks: as JSON ${page.bytes} bytes, parts: ${JSON.stringify(page.parts)}; as the file, SQL, Redis and etcd drivers store it (packed): ${verdict(page.packed)}; as the git driver packs and sends it (a deflated blob): ${verdict(page.stored)}; a signed page's window of it on the store-backed drivers: ${page.signed}`,
  );
  summarizePage(page);
  console.log(`history at ${SMALL} and ${BIG} transitions (git driver, local bare remote, server guard installed), medians of ${OPS}`);
  const { small, big } = await measureBoth();
  const rows: [string, keyof Figures][] = [
    ['one transition (petition or withdraw, CLI)', 'transition'],
    ["the server guard's check of one update", 'guard'],
    ['`status` in a clone (one new commit to fetch)', 'status'],
    ['`status --remote URL` (no clone)', 'statusRemote'],
    ["a fresh clone's first read (`status`)", 'freshClone'],
    ['lock page timeline in a new window: history read (newest 2,000) and draw', 'timeline'],
    ["lock page timeline, the clone's first read of the history", 'timelineFirst'],
    ['lock page timeline: the draw alone (buildTimeline; target ≤ 50 ms)', 'draw'],
  ];
  console.log(
    `\n| operation | at ${SMALL} transitions (${small.refCommits} commits on the ref) | at ${BIG} (${big.refCommits} commits) | ratio (target ≤ 1.3×) |`,
  );
  console.log('| --- | --- | --- | --- |');
  for (const [label, k] of rows) {
    const ratio = big[k] / small[k];
    console.log(
      `| ${label} | ${small[k].toFixed(1)} ms | ${big[k].toFixed(1)} ms | ${ratio.toFixed(2)}× ${ratio <= 1.3 ? 'met' : 'MISSED'} |`,
    );
  }
  for (const f of [small, big]) {
    console.log(
      `one compaction at ${f.refCommits} commits (\`lockstep compact\`, as a write past the bound runs it once per ${AUTO_COMPACT_AFTER}): ${f.compaction.toFixed(0)} ms; the guard's check of it ${f.compactionGuard.toFixed(0)} ms`,
    );
  }
  for (const [what, why] of failures) console.log(`failed: ${what}: ${why}`);
  summarizeHistory(small, big);
}

/** The run-wide summary's page-size row (bench/summary.ts), as README's. */
function summarizePage(page: ReturnType<typeof crowdedPageSizes>): void {
  const { queue, ranges, blocks, audit, auditLines } = page.parts as Record<string, number>;
  summaryRow({
    bench: 'historyScale',
    what: 'the page with 100 petitioners, 1,000 leased ranges and 100 blocks (the pure transition functions)',
    lockstep:
      `as stored by the file, SQL, Redis and etcd drivers (packed): ${fmt(page.packed)} bytes, and a signed page's window of it (${page.signedWindow.steps} steps) ${fmt(page.signedWindow.stored)}; ` +
      `as git stores and sends \`record.json\` (a deflated object): ${fmt(page.stored)} bytes. ` +
      `As JSON: ${fmt(page.bytes)} bytes (ranges ${fmt(ranges!)}, audit ${fmt(audit!)} in ${fmt(auditLines!)} lines, blocks ${fmt(blocks!)}, queue ${fmt(queue!)})`,
    baseline: 'the JSON, unpacked',
    target: `≤ 64 KB (packed, and as git stores it): ${verdict(page.packed <= 64 * 1024 && page.stored <= 64 * 1024)}`,
  });
}

/** The run-wide summary's history row (bench/summary.ts): each operation at BIG as a ratio to SMALL, from this run. */
function summarizeHistory(small: Figures, big: Figures): void {
  const duration = (x: number) =>
    Number.isNaN(x) ? 'FAILED' : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x >= 100 ? 0 : 1)} ms`;
  const ops: [string, keyof Figures][] = [
    ['one transition', 'transition'],
    ["the guard's check of it", 'guard'],
    ['`status` after one new commit', 'status'],
    ['`status --remote URL`', 'statusRemote'],
    ["a fresh clone's first read", 'freshClone'],
    ['the timeline in a new window (its history read and draw, what opening the lock page waits for)', 'timeline'],
    ["the same, the clone's first read of the history", 'timelineFirst'],
  ];
  const ratioOf = (k: keyof Figures) => big[k] / small[k];
  const figure = ([label, k]: [string, keyof Figures]) => {
    const r = ratioOf(k);
    if (Number.isNaN(r)) return `${label} **FAILED** (${duration(small[k])} → ${duration(big[k])})`;
    const ratio = r > 1.3 ? `**${times(r)}**` : times(r);
    return `${label} ${ratio} (${duration(small[k])} → ${duration(big[k])})`;
  };
  const compacted = (f: Figures) =>
    f.snapshots > 0
      ? `after automatic compaction (a snapshot every ${AUTO_COMPACT_AFTER} writes keeping the newest ${fmt(AUDIT_LOG_KEEP)} entries: ${fmt(f.snapshots)} so far, ${fmt(f.refCommits)} commits on the ref)`
      : `before automatic compaction (none yet: ${fmt(f.refCommits)} commits on the ref)`;
  // The issue's ≤ 1.3× list: one transition, the guard's check, `status --remote` and a fresh clone's first read. `status`
  // in a clone and the timeline's history read are shown beside them; the timeline's target is its render ≤ 50 ms.
  const targeted = new Set<keyof Figures>(['transition', 'guard', 'statusRemote', 'freshClone']);
  const over = ops.filter(([, k]) => targeted.has(k) && !(ratioOf(k) <= 1.3));
  const failed = [...failures].map(([what, why]) => `${what}: ${why.length > 160 ? `${why.slice(0, 160)}…` : why}`);
  const ratioVerdict =
    over.length === 0
      ? verdict(true)
      : over.length === targeted.size
        ? verdict(false)
        : `${verdict(false)} (over it: ${over.map(([label, k]) => (Number.isNaN(ratioOf(k)) ? `${label} (FAILED)` : label)).join(', ')})`;
  summaryRow({
    bench: 'historyScale',
    what:
      `the git lock ref at ${SMALL} and at ${fmt(BIG)} transitions (${process.env.BENCH_HISTORY_N === undefined ? 'the default N' : `BENCH_HISTORY_N=${BIG}`}), medians of ${OPS}, fresh clones of ${FRESH}, the two histories measured in turns, real CLI processes, server guard installed; ` +
      `at ${fmt(BIG)}: ${compacted(big)}`,
    lockstep:
      `${ops.map(figure).join('; ')}, its draw alone ${duration(big.draw)}; one compaction, what the write that reaches the bound pays once per ${AUTO_COMPACT_AFTER} writes: ${duration(big.compaction)}, the guard's check of it ${duration(big.compactionGuard)}` +
      (failed.length > 0 ? `; FAILED: ${failed.join('; ')}` : ''),
    baseline: `the same operations at ${SMALL} transitions, ${compacted(small)}`,
    target:
      `one transition, the guard's check, \`status --remote\` and a fresh clone's first read ≤ 1.3×: ${ratioVerdict}; ` +
      `the timeline renders in ≤ 50 ms: its draw ${Number.isNaN(big.draw) ? '**FAILED**' : verdict(big.draw <= 50)}; ` +
      `with its history read: in a new window ${Number.isNaN(big.timeline) ? '**FAILED**' : verdict(big.timeline <= 50)}, ` +
      `at the clone's first read of the history ${Number.isNaN(big.timelineFirst) ? '**FAILED**' : verdict(big.timelineFirst <= 50)}`,
  });
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
