/**
 * What a fresh reader (no witness: a fresh clone, `status --remote`, `lockstep verify` without
 * `--witness`) pays to prove a full signed chain window on a participants' store: 1,024 steps
 * (BENCH_STEPS), each a petition or a withdraw by one person, written through the signed chain driver
 * over the memory store (the chain's write and proof are the same on file, SQL, Redis and etcd: the
 * store only holds the value), signed once with an SSH key (ssh-keygen) and once with a GPG key (gpg),
 * each made for the run in a private home. Prints the steps the window kept and the median of three
 * fresh proofs (BENCH_RUNS), and the cost per step.
 *
 *   npm run bench -- signedWindow      (or: node --import tsx bench/signedWindow.ts)
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readChain } from '../src/core/chain/chainLayout';
import { createPage, petition, withdraw, type ContainerSettings, type LockRecord } from '../src/core/lockRecord';
import { createMemoryDriver } from '../src/core/stores/memory';
import { SignedChainDriver } from '../src/core/stores/signedChainDriver';
import { reasonOf, summaryRow } from './summary';

const STEPS = Number(process.env.BENCH_STEPS ?? 1024);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const WHO = 'alice@example.com';
const SETTINGS: ContainerSettings = { leaseTtlMs: 7_200_000, windowMs: 900_000, operators: [WHO] };
const KEY = 'bench-page';

type Kind = 'ssh' | 'openpgp';

function git(dir: string, args: readonly string[]): void {
  execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
}

/** A clone that signs with a fresh key of `kind`; what a reader is given to check it. */
function signer(root: string, kind: Kind): { gitDir: string; allowed: string; openpgp?: { signers: string; keys: string } } {
  const gitDir = path.join(root, 'clone');
  execFileSync('git', ['init', '-q', gitDir]);
  if (kind === 'ssh') {
    const key = path.join(root, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    git(gitDir, ['config', 'gpg.format', 'ssh']);
    git(gitDir, ['config', 'user.signingkey', key]);
    return { gitDir, allowed: `${WHO} ${fs.readFileSync(`${key}.pub`, 'utf8').trim()}\n` };
  }
  const home = path.join(root, 'gnupg');
  fs.mkdirSync(home, { mode: 0o700 });
  process.env.GNUPGHOME = home;
  const gpg = (args: readonly string[]) =>
    execFileSync('gpg', ['--batch', '--no-tty', '--passphrase', '', '--pinentry-mode', 'loopback', ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString('utf8');
  gpg(['--quick-gen-key', WHO, 'ed25519', 'sign', 'never']);
  const lines = gpg(['--with-colons', '--fixed-list-mode', '--list-keys']).split('\n');
  const fpr = lines[lines.findIndex(l => l.startsWith('pub:')) + 1].split(':')[9];
  git(gitDir, ['config', 'gpg.format', 'openpgp']);
  git(gitDir, ['config', 'user.signingkey', fpr]);
  // The allowed signers file lists someone else's SSH key: alice's steps are proven by the OpenPGP listing alone.
  return { gitDir, allowed: '', openpgp: { signers: `${WHO} ${fpr}\n`, keys: gpg(['--armor', '--export', fpr]) } };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** What one kind's run measured: the steps the window kept, its size, and the median fresh proof (ms). */
interface Proof {
  readonly kept: number;
  readonly bytes: number;
  readonly median: number;
}

async function run(kind: Kind): Promise<Proof> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `lockstep-bench-window-${kind}-`));
  const before = process.env.GNUPGHOME;
  try {
    const who = signer(root, kind);
    const store = createMemoryDriver();
    const writer = new SignedChainDriver(store, who.gitDir, true);
    let now = Date.UTC(2026, 0, 1);
    let record: LockRecord = createPage(CONTAINER, { identity: WHO }, now).record as LockRecord;
    let revision: string | null = null;
    const started = performance.now();
    for (let i = 0; i < STEPS; i++) {
      if (i > 0) {
        now += 1000;
        const next = i % 2 === 1 ? petition(record, { identity: WHO }, now) : withdraw(record, { identity: WHO }, now);
        record = next.record as LockRecord;
      }
      const written = await writer.compareAndSwap(KEY, revision, record, { summary: 'bench' });
      if (!written.ok) throw new Error('the bench page moved');
      revision = written.revision;
    }
    const writing = performance.now() - started;
    const stored = await store.read(KEY);
    const chain = readChain(stored?.value);
    const kept = chain.ok ? chain.steps.length : 0;
    const bytes = JSON.stringify(stored?.value).length;
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const reader = new SignedChainDriver(store, undefined);
      const read = await reader.read(KEY);
      const checkpointFile = path.join(root, `witness-${r}`);
      const t = performance.now();
      await reader.verifyHistory(read?.revision as string, {
        container: CONTAINER,
        settings: SETTINGS,
        allowedSigners: async () => who.allowed,
        ...(who.openpgp !== undefined ? { openpgp: async () => who.openpgp as { signers: string; keys: string } } : {}),
        checkpointFile,
      });
      times.push(performance.now() - t);
    }
    const m = median(times);
    console.log(
      `${kind}: ${STEPS} steps written in ${(writing / 1000).toFixed(1)} s; the window keeps ${kept} steps (${(bytes / 1024).toFixed(0)} KiB); ` +
        `a fresh reader proves it in ${(m / 1000).toFixed(2)} s (median of ${RUNS}: ${times.map(t => (t / 1000).toFixed(2)).join(', ')} s), ` +
        `${(m / kept).toFixed(1)} ms a step`,
    );
    return { kept, bytes, median: m };
  } finally {
    if (kind === 'openpgp') {
      try {
        execFileSync('gpgconf', ['--kill', 'all'], { stdio: 'ignore' });
      } catch {
        // no agent ran
      }
    }
    if (before === undefined) delete process.env.GNUPGHOME;
    else process.env.GNUPGHOME = before;
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`signed chain window: a fresh reader's proof (${os.cpus().length} cores, ${os.loadavg()[0].toFixed(2)} load)`);
  // One signer failing (a tool missing, a proof that throws) leaves the other's figure, and the bench exits 1.
  const attempt = (kind: Kind) =>
    run(kind).catch((error: unknown) => {
      console.error(`\n!!!!!!!! FAILED: ${kind}: ${reasonOf(error)} !!!!!!!!\n`);
      console.error(error);
      process.exitCode = 1;
      return reasonOf(error);
    });
  const ssh = await attempt('ssh');
  const gpg = await attempt('openpgp');
  if (typeof ssh === 'string' || typeof gpg === 'string') {
    const failed = (name: string, p: Proof | string) =>
      typeof p === 'string' ? `${name} **FAILED** (${p})` : `${name}: ${p.kept} steps, ${(p.median / 1000).toFixed(1)} s`;
    summaryRow({
      bench: 'signedWindow',
      what: `a fresh reader (no witness) proves a full signed chain window (medians of ${RUNS})`,
      lockstep: `${failed('SSH-signed', ssh)}; ${failed('GPG-signed', gpg)}`,
      baseline: 'one `ssh-keygen -Y verify` or one `gpg --verify` per step',
      target: '—',
    });
    return;
  }
  // The run-wide summary's row (bench/summary.ts), as README's.
  const proof = (name: string, tool: string, p: Proof) =>
    `${name} (${tool}, ${(p.bytes / 1024).toFixed(0)} KiB): ${(p.median / 1000).toFixed(p.median >= 10_000 ? 1 : 2)} s, ${(p.median / p.kept).toFixed(1)} ms a step`;
  const kept =
    (ssh.kept === gpg.kept ? `${ssh.kept.toLocaleString('en-US')} steps` : `${ssh.kept} (SSH) and ${gpg.kept} (GPG) steps`) +
    (ssh.kept === STEPS && gpg.kept === STEPS ? '' : ` (of ${STEPS.toLocaleString('en-US')} written)`);
  summaryRow({
    bench: 'signedWindow',
    what: `a fresh reader (no witness: a fresh clone, \`status --remote\`, \`verify\` without \`--witness\`) proves a full signed chain window, ${kept} of one person's petitions and withdrawals (participants' stores; medians of ${RUNS})`,
    lockstep: `${proof('SSH-signed', 'ssh-keygen', ssh)}; ${proof('GPG-signed', 'gpg', gpg)}`,
    baseline: 'one `ssh-keygen -Y verify` or one `gpg --verify` per step; a reader with a witness judges only the steps after it',
    target: '—',
  });
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
