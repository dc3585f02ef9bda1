/**
 * The container protocol under chaos (issue 15): K clones of one shared bare remote, guarded as a team
 * would be (`lockstep hooks install` in each clone, `lockstep hooks install --server` in the remote after
 * the container's .lockstep.json is pushed), each run a random script of acquire (short TTL), heartbeat,
 * petition, withdraw, lease-ids, next-id, commit + push + release, and operator clear, while a killer
 * SIGKILLs their lockstep processes. A post-receive hook logs each landing on main with its grant option;
 * the record is read every 150 ms (audit lines and holders). chaos/checkContainerLog.ts judges the run.
 *
 * Unknown outcomes (issue 23): the killer leans toward heartbeat and release, and 1 acquire in 4 is also killed at
 * a random instant after it wrote its pending.json (its compare-and-swap about to go or in flight). The monitor looks
 * for a stranded grant (a live holder whose token no clone holds) on every read, and after each kill of those
 * three commands the clone's next command must have finished or discarded what the kill left
 * (chaos/checkSettle.ts judges both). Tokens are read and hashed here, never printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Container } from '../src/core/container/container';
import { SECOND } from '../src/core/clock';
import { MIN_LEASE_TTL_MS, type AuditLine, type LockRecord } from '../src/core/lockRecord';
import { hashToken } from '../src/core/tokens';
import { checkContainerLog, type Landing, type ObservedHolder, type PushStart } from './checkContainerLog';
import { needsAfterRead, strandedGrant, unsettledAfterKill, type PageView, type TokenFileView } from './checkSettle';

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const OPERATOR = 'ops@example.invalid';
const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)];

export interface ContainerRow {
  seconds: number;
  sections: number;
  kills: number;
  faults: string;
  errors: string;
  violations: string[];
  summary: string;
  settling: string;
}

/** The commands whose kill may leave an unknown outcome behind (issue 23). */
const SETTLED = new Set(['acquire', 'heartbeat', 'release']);
/**
 * How often the killer, when a heartbeat or a release is running, picks among those rather than among all: they are
 * rarer and shorter than acquires, which are already the command most often running when the killer strikes (and
 * on git, leaning toward them too killed 2 acquires in 3 and starved the run). A grant loses one heartbeat or release
 * to the killer at most: after one was killed (leaned toward or picked among all), that grant's next ones are spared
 * until the clone acquires again. Killing them every time killed 2 releases in 3 (a release is a Node start and a
 * store round trip, 1.5–4 s a command on a loaded 2-core machine with etcd, while the killer strikes every 0.6 s; at
 * git's pace still 7 in 10): the holder pulled, committed, pushed and released again and again, the others found the
 * lock busy, and a 20 s etcd run saw 1 grant. The first kill is what the settling checks judge; a second proves no more.
 */
const LEAN = 0.5;
const LEANED = new Set(['heartbeat', 'release']);
/** How often an acquire that wrote its pending.json is killed a random instant later (its write in flight). */
const WINDOW_KILL = 0.25;

/**
 * A clone's token file as the checks see it: its grant and its token's hash (the token itself goes no further), or
 * undefined when there is no file. A file that exists but cannot be read or holds no grant and token is not a removed
 * one (Lockstep writes these files whole, by rename): it is noted in `unreadable`, which fails the run, and the checks
 * that read it go on as if it were absent.
 */
function tokenFile(clone: string, name: 'pending.json' | 'session.json', unreadable: string[]): TokenFileView | undefined {
  const file = path.join(clone, '.git', 'lockstep', name);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      unreadable.push(`${path.basename(clone)}/${name} could not be read (${(error as NodeJS.ErrnoException).code})`);
    return undefined;
  }
  try {
    const s = JSON.parse(text) as { grant?: unknown; token?: unknown };
    if (typeof s.token === 'string' && typeof s.grant === 'number') return { grant: s.grant, tokenHash: hashToken(s.token) };
  } catch {
    /* noted below */
  }
  unreadable.push(`${path.basename(clone)}/${name} exists but holds no grant and token (${text.length} bytes): a torn write`);
  return undefined;
}

const pageView = (record: LockRecord): PageView => ({ grant: record.grant, holder: record.holder, audit: record.audit });

const POST_RECEIVE = (log: string) => `#!/bin/sh
grant=null; i=0
while [ "$i" -lt "\${GIT_PUSH_OPTION_COUNT:-0}" ]; do
  eval "o=\\$GIT_PUSH_OPTION_$i"
  case "$o" in lockstep-grant=*) grant="\${o#lockstep-grant=}" ;; esac
  i=$((i + 1))
done
while read -r old new ref; do
  [ "$ref" = refs/heads/main ] && printf '{"at":%s,"sha":"%s","grant":%s}\\n' "$(date +%s%3N)" "$new" "$grant" >> ${JSON.stringify(log)}
done
exit 0
`;

/**
 * How fast the run goes on each driver: the killer's pause between SIGKILLs (ms). On git every lockstep command
 * fetches from and pushes to the remote (0.5–2 s each on a loaded 2-core machine, the slowed pre-receive included),
 * and landing is pull + commit + push + release: at the file driver's pace (a kill every 0.1–0.6 s among 5 clones)
 * nearly every git command was killed before it finished, so git kills about 5× less often; the invariants are the
 * same. On file and SQLite a landing (pull, commit, a push through the client and the server guard, each a Node
 * process, then release) takes 1–3 s under load, and the killer pauses 0.2–1 s: still several kills per grant.
 *
 * The lease an acquire asks for is the container's shortest, 60 s ({@link ACQUIRE_TTL_SECONDS}; issue #24: a grant
 * is bounded by the container's limits, and `--ttl` of the run is the plain leases' only). It used to be the run's
 * `--ttl` times 8 (10 on git) so that killed holders went silent within seconds. A grant cannot be dated back here
 * (test/helpers/lapsingGrant.ts does that for tests): the audit's times are the run's real timeline, and the checker
 * (checkContainerLog.ts) reads "two live holders" from them. So a holder killed for good now blocks for a minute
 * before it goes silent and may be cleared or taken over: most grants end by a landing and a release, and a run
 * sees takeovers and clears only past a minute (a CI-sized run of a minute or two sees a few).
 */
const PACE: Record<ContainerDriver, { killMs: readonly [number, number] }> = {
  file: { killMs: [200, 1000] },
  sqlite: { killMs: [200, 1000] },
  git: { killMs: [500, 3000] },
  // Redis, MariaDB and PostgreSQL answer as fast as file and SQLite: their pace.
  redis: { killMs: [200, 1000] },
  // etcd: every lockstep command loads the etcd client (gRPC and its .proto files: 1.5–4 s a command on a loaded
  // 2-core machine, beside a three-member cluster), and a landing runs three (pre-push, the server guard, release),
  // 6–10 s in all. At the file driver's pace 7 releases in 9 were killed and a 60 s run saw 1 grant; at git's, 3.
  etcd: { killMs: [500, 3000] },
  mariadb: { killMs: [200, 1000] },
  postgres: { killMs: [200, 1000] },
};
/** The lease every acquire of the run asks for: the container's shortest. */
const ACQUIRE_TTL_SECONDS = MIN_LEASE_TTL_MS / SECOND;

/** The store a container runs on (`init --driver`: the three SQL ones are `sql`). */
export type ContainerDriver = 'file' | 'sqlite' | 'git' | 'redis' | 'etcd' | 'mariadb' | 'postgres';

export async function runContainerChaos(options: {
  driver: ContainerDriver;
  dir: string;
  env: Record<string, string>;
  clones: number;
  ms: number;
  extend: number;
  slowPreReceive?: { install: (bare: string, chained: string) => void; describe: string };
  /**
   * The store's own faults (etcd: leader kills, member pauses), run from the moment the clones start until the run
   * ends (`until()` moves when the run is extended). Not during set-up: an `init` or `hooks install` that met a
   * leader election failed the whole run (exit 4) before it began.
   */
  storeFaults?: (until: () => number) => Promise<void>;
}): Promise<ContainerRow> {
  const { dir } = options;
  const pace = PACE[options.driver];
  const ttl = ACQUIRE_TTL_SECONDS;
  if (!fs.existsSync(CLI)) {
    const built = spawnSync(process.execPath, ['scripts/build.mjs', '--no-types'], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`scripts/build.mjs failed: ${built.stderr}`);
  }
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', ...options.env };
  let kills = 0;
  /** The lockstep processes running, with the command each runs and its clone (what the killer chooses from). */
  const running = new Map<ChildProcess, { command: string; clone: string }>();
  /** The clones whose current grant already lost a heartbeat or release to the killer: its next ones are spared. */
  const spared = new Set<string>();
  /** The acquire running in each clone, if any: what a new pending.json there belongs to. */
  const acquiring = new Map<string, ChildProcess>();
  const windowArmed = new WeakSet<ChildProcess>();
  const killsBy: Record<string, number> = {};
  let windowKills = 0;
  const kill = (child: ChildProcess, command: string) => {
    if (!running.has(child)) return false;
    running.delete(child); // killed once: a second pick of the same process is no second kill
    child.kill('SIGKILL');
    killsBy[command] = (killsBy[command] ?? 0) + 1;
    kills++;
    return true;
  };
  const run = (file: string, args: string[], cwd: string, extra: Record<string, string> = {}, tag?: { command: string; clone: string }) =>
    new Promise<{ code: number | null; out: string; err: string }>(resolve => {
      const child = spawn(file, args, { cwd, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', c => {
        out += c;
      });
      child.stderr.on('data', c => {
        err += c;
      });
      if (tag !== undefined) running.set(child, tag);
      const clone = tag?.command === 'acquire' ? tag.clone : undefined;
      if (clone !== undefined) acquiring.set(clone, child);
      child.on('close', code => {
        running.delete(child);
        if (clone !== undefined && acquiring.get(clone) === child) acquiring.delete(clone);
        resolve({ code, out, err });
      });
    });
  const gitOk = async (cwd: string, ...args: string[]) => {
    const r = await run('git', args, cwd);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.err}`);
    return r.out.trim();
  };
  const lockstep = async (clone: string, args: string[], extra: Record<string, string> = {}) => {
    const r = await run(process.execPath, [CLI, '--cwd', clone, '--json', ...args], dir, extra, { command: args[0], clone });
    let json: any;
    try {
      json = JSON.parse(r.out.trim().split('\n').pop() ?? '');
    } catch {
      json = undefined;
    }
    return { code: r.code, json, err: r.err };
  };

  // The team, in fencingFixture's order.
  const remote = path.join(dir, 'remote.git');
  await gitOk(dir, 'init', '-q', '--bare', '--initial-branch=main', remote);
  const seed = path.join(dir, 'seed');
  await gitOk(dir, 'clone', '-q', remote, seed);
  for (const [k, v] of [
    ['user.name', 'seed'],
    ['user.email', 'seed@example.invalid'],
  ])
    await gitOk(seed, 'config', k, v);
  await gitOk(seed, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  fs.writeFileSync(path.join(seed, 'README.md'), 'chaos\n');
  await gitOk(seed, 'add', '.');
  await gitOk(seed, 'commit', '-qm', 'first');
  await gitOk(seed, 'push', '-q', '-u', 'origin', 'main');
  const init = await lockstep(seed, [
    'init',
    '--server-guard',
    '--driver',
    ['sqlite', 'mariadb', 'postgres'].includes(options.driver) ? 'sql' : options.driver,
    '--operator',
    OPERATOR,
  ]);
  if (init.code !== 0) throw new Error(`lockstep init failed (${init.code})`);
  await gitOk(seed, 'add', '.lockstep.json');
  await gitOk(seed, 'commit', '-qm', 'lockstep container');
  await gitOk(seed, 'push', '-q', 'origin', 'main');
  const installed = await lockstep(remote, ['hooks', 'install', '--server']);
  if (installed.code !== 0) throw new Error(`lockstep hooks install --server failed (${installed.code})`);
  const landingsLog = path.join(dir, 'landings.jsonl');
  fs.writeFileSync(path.join(remote, 'hooks', 'post-receive'), POST_RECEIVE(landingsLog), { mode: 0o755 });
  if (options.slowPreReceive) {
    const guard = path.join(remote, 'hooks', 'pre-receive.lockstep');
    fs.renameSync(path.join(remote, 'hooks', 'pre-receive'), guard);
    options.slowPreReceive.install(remote, guard);
  }
  const heartbeatTtlMs = JSON.parse(fs.readFileSync(path.join(seed, '.lockstep.json'), 'utf8')).leaseTtlSeconds * 1000;
  const clones: { dir: string; identity: string }[] = [];
  for (let i = 0; i < options.clones; i++) {
    const c = path.join(dir, `clone-${i}`);
    const identity = `c${i}@example.invalid`;
    await gitOk(dir, 'clone', '-q', remote, c);
    for (const [k, v] of [
      ['user.name', `c${i}`],
      ['user.email', identity],
    ])
      await gitOk(c, 'config', k, v);
    if ((await lockstep(c, ['hooks', 'install'])).code !== 0) throw new Error('lockstep hooks install failed');
    clones.push({ dir: c, identity });
  }
  // The write window: a pending.json appearing while the clone's acquire runs means its compare-and-swap is about to
  // go or in flight; 1 in 4 such acquires is killed a random instant later (up to a file or SQL write's few ms, or a
  // git push's seconds). The folder is made as lockstep makes it (0700), so that it can be watched from the start.
  const windowMs = options.driver === 'git' ? 2500 : 15;
  const watchers = clones.map(c => {
    const folder = path.join(c.dir, '.git', 'lockstep');
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    return fs.watch(folder, (_event, name) => {
      const child = acquiring.get(c.dir);
      if (name !== 'pending.json' || child === undefined || windowArmed.has(child)) return;
      windowArmed.add(child);
      if (Math.random() >= WINDOW_KILL || !fs.existsSync(path.join(folder, 'pending.json'))) return;
      setTimeout(
        () => {
          if (kill(child, 'acquire')) windowKills++;
        },
        rand(0, windowMs),
      );
    });
  });

  const acquired: number[] = [];
  const claimed: number[] = [];
  const minted: number[] = [];
  const cleared: number[] = [];
  const pushes: PushStart[] = [];
  const codes: Record<string, number> = {};
  const audit = new Map<string, AuditLine>();
  const holders = new Map<number, ObservedHolder>();
  const began = performance.now();
  let deadline = began + options.ms; // moved on while nothing landed yet, up to EXTEND times (see run.ts)
  // In Date.now() terms, as the store's fault loop reads the clock.
  const faulting = options.storeFaults?.(() => Date.now() + (deadline - performance.now()));
  let ops = 0;

  const container = await Container.open({ cwd: seed, env: env as Record<string, string> });
  const observe = (record: LockRecord) => {
    for (const l of record.audit) {
      // A run of heartbeats folds into one line whose time moves: keep the latest per grant.
      const key = l.action === 'heartbeat' ? `hb\0${l.grant}\0${l.outcome}` : `${l.at}\0${l.action}\0${l.grant}\0${l.who}\0${l.outcome}`;
      const had = audit.get(key);
      if (!had || had.at < l.at) audit.set(key, l);
    }
    const h = record.holder;
    if (h) {
      const had = holders.get(h.grant);
      if (!had || had.expiresAt < h.expiresAt) holders.set(h.grant, { grant: h.grant, grantedAt: h.grantedAt, expiresAt: h.expiresAt });
    }
    return pageView(record);
  };
  const readPage = async () => observe((await container.read()).record);
  // Stranded grants: a live holder on the page, then every clone's pending.json and session.json (in that order in
  // each clone: a promotion writes the session before it removes the pending file), then the page again.
  const stranded = new Set<number>();
  /** Token files that existed but could not be read (tokenFile): each one fails the run. */
  const unreadable: string[] = [];
  let strandedChecks = 0;
  const checkStranded = async () => {
    const first = await readPage();
    const now = Date.now();
    if (first.holder === null || first.holder.expiresAt <= now) return;
    const held = new Set<string>();
    for (const c of [seed, ...clones.map(x => x.dir)]) {
      for (const name of ['pending.json', 'session.json'] as const) {
        const f = tokenFile(c, name, unreadable);
        if (f) held.add(f.tokenHash);
      }
    }
    const second = await readPage();
    strandedChecks++;
    const grant = strandedGrant(first.holder, now, held, second.holder, Date.now());
    if (grant !== undefined) stranded.add(grant);
  };
  let monitorFailed = 0;
  let monitorReads = 0;
  const monitor = (async () => {
    while (performance.now() < deadline) {
      monitorReads++;
      try {
        await checkStranded();
      } catch {
        monitorFailed++; /* the next round */
      }
      await sleep(150);
    }
  })();
  const killer = (async () => {
    while (performance.now() < deadline) {
      await sleep(rand(...pace.killMs));
      const victims = [...running].filter(([, { command, clone }]) => !(LEANED.has(command) && spared.has(clone)));
      const leaned = victims.filter(([, { command }]) => LEANED.has(command));
      if (victims.length === 0) continue;
      const [child, { command, clone }] = pick(leaned.length > 0 && Math.random() < LEAN ? leaned : victims);
      if (kill(child, command) && LEANED.has(command)) spared.add(clone);
    }
  })();

  // After a kill of acquire, heartbeat or release, the clone's next command that read the page is judged.
  const unsettled: string[] = [];
  const settling = { judged: 0, leftPending: 0, promoted: 0, promotedByOther: 0, dropped: 0, kept: 0, releasesFinished: 0, unjudged: 0 };
  const timeouts: Record<string, number> = {};
  let unknownAcquires = 0;
  let commitNo = 0;
  const worker = async (me: { dir: string; identity: string }) => {
    let holding = false;
    const mine = new Set<number | 'unknown'>(); // the grants this clone was told it acquired
    /** The kills of SETTLED commands not judged yet, and the pending.json the first of them left, if any. */
    let owed: { kills: string[]; leftPending?: TokenFileView } | undefined;
    const step = async (args: string[], extra: Record<string, string> = {}) => {
      const judging = owed;
      const before = judging ? await readPage().catch(() => undefined) : undefined;
      const sessionBefore = tokenFile(me.dir, 'session.json', unreadable);
      const r = await lockstep(me.dir, args, extra);
      // A grant this command promoted from pending.json (an earlier acquire's, killed or timed out): the clone holds it.
      const now = tokenFile(me.dir, 'session.json', unreadable);
      if (now !== undefined && now.tokenHash !== sessionBefore?.tokenHash && args[0] !== 'acquire') {
        holding = true;
        mine.add(now.grant);
      }
      const message: string = r.json?.error?.message ?? '';
      if (r.code === 4 && /did not finish within/.test(message)) timeouts[args[0]] = (timeouts[args[0]] ?? 0) + 1;
      if (r.code === 4 && args[0] === 'acquire' && /not known yet/.test(message)) unknownAcquires++;
      if (r.code === null) {
        if (SETTLED.has(args[0])) {
          const left = tokenFile(me.dir, 'pending.json', unreadable);
          if (left && owed?.leftPending === undefined) settling.leftPending++;
          owed = { kills: [...(owed?.kills ?? []), args[0]], leftPending: owed?.leftPending ?? left };
        }
        return r;
      }
      // Exit 0, 1 (a refusal) or 3 (busy): the command read the page. Others (4: a store that did not answer) may not have.
      if (judging === undefined || before === undefined || ![0, 1, 3].includes(r.code)) return r;
      owed = undefined;
      settling.judged += judging.kills.length;
      const pending = tokenFile(me.dir, 'pending.json', unreadable);
      const session = tokenFile(me.dir, 'session.json', unreadable);
      const after = needsAfterRead(before, session) ? await readPage().catch(() => undefined) : undefined;
      const problem = unsettledAfterKill({ before, pending, session, ...(after ? { after } : {}) });
      if (problem !== undefined) {
        const killed = [...SETTLED]
          .map(c => [c, judging.kills.filter(k => k === c).length] as const)
          .filter(([, n]) => n > 0)
          .map(([c, n]) => `${n} ${c}`)
          .join(', ');
        unsettled.push(
          `${path.basename(me.dir)}: after its killed commands (${killed}), the next command (${args[0]}, exit ${r.code}) left ${problem}`,
        );
        return r;
      }
      const left = judging.leftPending;
      if (left) {
        if (session?.tokenHash === left.tokenHash) settling.promoted++;
        else if (pending?.tokenHash === left.tokenHash) settling.kept++;
        else settling.dropped++;
      }
      if (sessionBefore && needsAfterRead(before, sessionBefore) && session?.tokenHash !== sessionBefore.tokenHash)
        settling.releasesFinished++;
      if (left && session?.tokenHash === left.tokenHash && args[0] !== 'acquire') settling.promotedByOther++;
      return r;
    };
    while (performance.now() < deadline) {
      ops++;
      // A holder mostly lands (2 in 3): on a loaded machine its short lease lapses after a few other steps.
      const action: string = holding
        ? pick(['heartbeat', 'lease-ids', 'next-id', 'land', 'land', 'land', 'land', 'land', 'land'])
        : pick(['acquire', 'acquire', 'acquire', 'petition', 'withdraw', 'clear', 'next-id']);
      let r: { code: number | null; json: any; err: string };
      if (action === 'acquire') {
        r = await step(['acquire', '--ttl', String(ttl)]);
        // Killed, or a store that did not answer (exit 4): it may have written its grant, which a later command finds.
        if (r.code === null || r.code === 4) mine.add('unknown');
        if (r.code === 0) {
          holding = true;
          // "already": this clone still holds a grant it took before (the worker gave up on it after a refused
          // release or heartbeat). Not a new acquisition; but it must be one of this clone's own.
          if (r.json.already === true) {
            if (!mine.has(r.json.grant) && !mine.has('unknown')) claimed.push(r.json.grant);
          } else {
            acquired.push(r.json.grant);
            mine.add(r.json.grant);
            spared.delete(me.dir); // a new grant: its heartbeats and releases may be killed again
          }
        }
      } else if (action === 'heartbeat') r = await step(['heartbeat']);
      else if (action === 'petition') r = await step(['petition']);
      else if (action === 'withdraw') r = await step(['withdraw']);
      else if (action === 'lease-ids') r = await step(['lease-ids', '--to', pick(clones).identity, '--count', '3', '--new-identity']);
      else if (action === 'next-id') {
        r = await step(['next-id']);
        if (r.code === 0) minted.push(r.json.id);
      } else if (action === 'clear') {
        r = await step(['clear', '--reason', 'chaos'], { LOCKSTEP_IDENTITY: OPERATOR });
        if (r.code === 0) cleared.push(r.json.clearedGrant);
      } else {
        // land: a real commit, pushed through the guards, then release
        await run('git', ['pull', '-q', '--rebase', 'origin', 'main'], me.dir);
        fs.writeFileSync(path.join(me.dir, `${path.basename(me.dir)}.txt`), `${++commitNo}\n`);
        await gitOk(me.dir, 'add', '.');
        await run('git', ['commit', '-qm', `chaos ${commitNo}`], me.dir);
        const sha = await gitOk(me.dir, 'rev-parse', 'HEAD');
        pushes.push({ sha, at: Date.now() });
        const pushed = await run('git', ['push', '-q', 'origin', 'HEAD:main'], me.dir);
        codes[`push-${pushed.code === 0 ? 'ok' : 'refused'}`] = (codes[`push-${pushed.code === 0 ? 'ok' : 'refused'}`] ?? 0) + 1;
        r = await step(['release']);
        if (r.code === 0) holding = false;
      }
      if (r.code === 1 && (action === 'heartbeat' || action === 'land')) holding = false; // lost or refused: start over
      const key = `${action}:${r.code === null ? 'killed' : r.code}`;
      codes[key] = (codes[key] ?? 0) + 1;
      await sleep(rand(0, 50));
    }
    if (owed) settling.unjudged += owed.kills.length;
  };
  const extender = (async () => {
    while (performance.now() < deadline) {
      await sleep(250);
      const starved = acquired.length === 0 || !fs.existsSync(landingsLog);
      // Kept 2 s ahead while starved, so that no loop sees the old end first.
      if (starved && performance.now() > deadline - 2000)
        deadline = Math.max(deadline, Math.min(began + options.extend * options.ms, performance.now() + 2000));
    }
  })();
  await Promise.all([...clones.map(worker), monitor, killer, extender, faulting]);
  const seconds = (performance.now() - began) / 1000;
  for (const w of watchers) w.close();
  await readPage();
  await container.close();
  const landings: Landing[] = fs.existsSync(landingsLog)
    ? fs
        .readFileSync(landingsLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(l => JSON.parse(l) as Landing)
    : [];
  const verdict = checkContainerLog({
    audit: [...audit.values()].sort((a, b) => a.at - b.at),
    holders: [...holders.values()],
    acquireTtlMs: ttl * 1000,
    heartbeatTtlMs,
    acquired,
    minted,
    cleared,
    pushes,
    landings,
  });
  const violations = [...verdict.violations];
  for (const g of claimed) violations.push(`a clone was told it already holds grant #${g}, which it never acquired`);
  if (verdict.grants === 0 || verdict.landings === 0)
    violations.push(`the run proves little: ${verdict.grants} grants, ${verdict.landings} landings`);
  const undocumented = Object.entries(codes).filter(([k]) => /:(2|5|null)$/.test(k) && !k.endsWith('killed'));
  for (const [k, n] of undocumented) violations.push(`${n} × ${k}: a usage or internal error`);
  for (const g of [...stranded].sort((a, b) => a - b))
    violations.push(`stranded grant #${g}: live on the page while no clone's session.json or pending.json held its token`);
  violations.push(...unsettled);
  for (const u of [...new Set(unreadable)].slice(0, 10)) violations.push(`unreadable token file: ${u}`);
  const byCommand = [...SETTLED, 'other']
    .map(
      c =>
        `${c} ${
          c === 'other'
            ? Object.entries(killsBy)
                .filter(([k]) => !SETTLED.has(k))
                .reduce((n, [, v]) => n + v, 0)
            : (killsBy[c] ?? 0)
        }`,
    )
    .join(', ');
  const timedOut =
    Object.entries(timeouts)
      .sort()
      .map(([k, v]) => `${v} ${k}`)
      .join(', ') || 'none';
  return {
    seconds,
    sections: verdict.grants,
    kills,
    faults: options.slowPreReceive?.describe ?? '-',
    errors: Object.entries(codes)
      .sort()
      .map(([k, v]) => `${v} ${k}`)
      .join(', '),
    violations,
    summary: `${ops} operations, ${verdict.grants} grants, ${verdict.landings} landings, ${verdict.minted} identifiers, ${verdict.clears} clears`,
    settling:
      `kills by command: ${byCommand} (${windowKills} acquires in their write window); ` +
      `stranded grants: ${stranded.size} (${strandedChecks} live holders checked in ${monitorReads} rounds, ${monitorFailed} of which failed to read); ` +
      `kills judged at the clone's next command: ${settling.judged}, unsettled: ${unsettled.length} ` +
      `(${settling.leftPending} left a pending.json: ${settling.promoted} promoted (${settling.promotedByOther} by a command other than acquire), ${settling.dropped} dropped, ${settling.kept} kept for a write still due; ` +
      `${settling.releasesFinished} unconfirmed releases finished; ${settling.unjudged} not judged before the end)` +
      (options.driver === 'git' ? `; git timeouts: ${timedOut}, acquires with an unknown outcome: ${unknownAcquires}` : ''),
  };
}
