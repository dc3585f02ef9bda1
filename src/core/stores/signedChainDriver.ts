import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../atomicReplace';
import { LockBackendError, LockStorageError, LockTamperedPageError } from '../errors';
import { appendStep, readChain, type ReadChain } from '../chain/chainLayout';
import { coalescedStep } from '../chain/heartbeatRenewals';
import { checkChain, digestOf, provenThrough, stepMessage, type ChainStep, type JudgedStep, type Witness } from '../chain/signedChain';
import type { StepSignature } from '../chain/signedStep';
import type { LockRecord } from '../lockRecord';
import { encodeRecord, parseRecord } from '../recordCodec';
import { readOpenpgpListing } from '../chain/openpgpSigners';
import { judgeSignature, signStep, stepSigner, type StepSigner } from './chainSignatures';
import { isOpenpgpSignature, judgeOpenpgp } from './openpgpStepSignatures';
import { withSignersFile } from './git/signersFile';
import type { SigningPolicy } from './git/verifiedHistory';
import type { CasMeta, CasResult, ClaimResult, Driver, ReleaseResult, VersionedRecord, Watch, WatchOptions } from './store';

/**
 * A signed lock page on a store whose writers are all participants (file, SQL, Redis, etcd, with
 * `allowedSigners` in `.lockstep.json`; steps signed with SSH, or GPG where it lists openpgpSigners): the store's own driver underneath, unchanged, and the
 * signed chain of signedChain.ts kept in the one value it stores (in the layout of chainLayout.ts: a
 * layout 1 page is read, and written again as layout 2). Every write of a container record
 * appends this clone's signed step in the same compare-and-swap; a read hands back the chain's
 * newest record, and {@link verifyHistory} proves the chain before anyone believes it — from the
 * witness this reader kept, or from the window's start for a reader with none. Plain leases pass
 * through untouched (they are not the lock page).
 */
export class SignedChainDriver implements Driver {
  readonly watch?: (key: string, onChange: () => void, options?: WatchOptions) => Watch;
  readonly #inner: Driver;
  readonly #gitDir: string | undefined;
  /** The chains last read or written, by revision (a few: verifyHistory proves what was just read). */
  readonly #read = new Map<string, { key: string; value: unknown; chain: ReadChain }>();
  /** Whether a step may be signed with gpg (the container lists openpgpSigners). */
  readonly #openpgp: boolean;
  #signer: Promise<StepSigner> | undefined;
  /** Where this reader keeps its witness (from the last proof): a step it writes on top of it becomes its witness. */
  #witnessFile: string | undefined;

  constructor(inner: Driver, gitDir: string | undefined, openpgp = false) {
    this.#inner = inner;
    this.#gitDir = gitDir;
    this.#openpgp = openpgp;
    if (inner.watch) {
      const watch = inner.watch.bind(inner);
      // The watcher's interest and the watch's pace and freshness pass through (a polling SQL watch needs both).
      this.watch = (key, onChange, options) => watch(key, onChange, options);
    }
  }

  get name() {
    return this.#inner.name;
  }
  get distributed() {
    return this.#inner.distributed;
  }

  claim(key: string, ownerHash: string, ttlMs: number, now: number): Promise<ClaimResult> {
    return this.#inner.claim(key, ownerHash, ttlMs, now);
  }
  extend(key: string, ownerHash: string, ttlMs: number, now: number): Promise<boolean> {
    return this.#inner.extend(key, ownerHash, ttlMs, now);
  }
  release(key: string, ownerHash: string, now: number): Promise<ReleaseResult> {
    return this.#inner.release(key, ownerHash, now);
  }
  close(): Promise<void> {
    return this.#inner.close();
  }

  /** The chain's newest record (not yet proven: the container proves it with {@link verifyHistory}). */
  async read(key: string): Promise<VersionedRecord | null> {
    const stored = await this.#inner.read(key);
    if (stored === null) return null;
    const chain = this.remember(stored.revision, key, stored.value);
    if (!chain.ok && chain.newer) throw newerLayout(this.name, chain.why);
    if (!chain.ok) return stored; // unsigned: verifyHistory reads it tampered
    return { value: parsedOrUndefined(chain.steps[chain.steps.length - 1].r), revision: stored.revision };
  }

  /** Appends this clone's signed step for `next` to the chain at `expectedRevision`, in one write. */
  async compareAndSwap(key: string, expectedRevision: string | null, next: unknown, meta: CasMeta): Promise<CasResult> {
    let steps: readonly ChainStep[] = [];
    if (expectedRevision !== null) {
      const chain = await this.chainAt(key, expectedRevision);
      if (chain === null) return { ok: false };
      if (!chain.ok && chain.newer) throw newerLayout(this.name, chain.why);
      if (!chain.ok) {
        throw new LockStorageError(
          this.name,
          'The lock page holds no signed chain, so no signed step can be added to it; an operator starts one with a signed lockstep adopt.',
        );
      }
      steps = chain.steps;
    }
    return this.write(key, expectedRevision, steps, next as LockRecord, meta);
  }

  /**
   * An operator's signed adopt over a tampered page: a new chain that starts with it. Never over a page
   * in a later layout than this version reads (checked here too, whatever the caller read): that page is
   * not tampered, only newer, and replacing it would drop its history.
   */
  async replaceRecord(key: string, expectedRevision: string, next: unknown): Promise<{ ok: true; revision: string } | { ok: false }> {
    const chain = await this.chainAt(key, expectedRevision);
    if (chain === null) return { ok: false };
    if (!chain.ok && chain.newer) throw newerLayout(this.name, chain.why);
    return this.write(key, expectedRevision, [], next as LockRecord, { summary: 'adopt' }, true);
  }

  /** The chain at `expectedRevision`, as last read or read now; null when the page is no longer at that revision. */
  private async chainAt(key: string, expectedRevision: string): Promise<ReadChain | null> {
    const known = this.#read.get(expectedRevision)?.chain;
    if (known !== undefined) return known;
    const stored = await this.#inner.read(key);
    if (stored === null || stored.revision !== expectedRevision) return null;
    return this.remember(stored.revision, key, stored.value);
  }

  /**
   * Proves the chain at `revision` (as last read) for this reader (signedChain.ts); throws
   * LockTamperedPageError naming the first step that is not proven. Keeps the new witness.
   */
  async verifyHistory(revision: string, policy: SigningPolicy): Promise<void> {
    const read = this.#read.get(revision);
    if (read === undefined)
      throw new LockBackendError(this.name, 'The lock page changed while its signatures were being checked; try again.');
    if (!read.chain.ok && read.chain.newer) throw newerLayout(this.name, read.chain.why);
    if (!read.chain.ok) {
      throw new LockTamperedPageError(
        this.name,
        digestOf(JSON.stringify(read.value ?? null)),
        'the page holds no signed chain: it was written without signing (before signing was turned on, or by hand).',
      );
    }
    this.#witnessFile = policy.checkpointFile;
    const witness = readWitness(policy.checkpointFile);
    const steps = read.chain.steps;
    const digests = steps.map(s => digestOf(s.r));
    // Each record parsed when first needed: a reader with a witness judges only the steps after it.
    const driver = this.name;
    const parsed = steps.map((step, i) => {
      let record: LockRecord | undefined | null = null;
      return {
        step,
        digest: digests[i],
        get record(): LockRecord | undefined {
          if (record === null) record = parseChecked(step.r, driver, policy);
          return record;
        },
      };
    });
    // Steps up to the witness (or up to the heartbeats that replaced it) were proven before: their signatures are not checked again.
    const known = witness === undefined ? -1 : provenThrough(parsed, witness.digest, policy.settings);
    if (known === steps.length - 1) return;
    // An OpenPGP step is judged in the reader's own keyring of the listed keys (empty when the container lists none),
    // filled only when a step to judge is one: a read of new SSH steps starts no gpg.
    const openpgpSteps = steps.some((step, i) => i > known && isOpenpgpSignature(step.s));
    const listing = policy.openpgp === undefined || !openpgpSteps ? undefined : readOpenpgpListing(await policy.openpgp());
    const judged = await withSignersFile(
      await policy.allowedSigners(),
      async (file, env) => {
        const out: JudgedStep[] = [];
        for (const [i, s] of parsed.entries()) {
          const { step } = s;
          const message = stepMessage(read.key, step.p, step.r, step.h);
          const signature: StepSignature =
            i <= known
              ? { status: 'G', signer: '' }
              : isOpenpgpSignature(step.s)
                ? await judgeOpenpgp(env.GNUPGHOME, message, step.s, listing?.signers, this.name)
                : await judgeSignature(file, message, step.s, s.record?.audit.at(-1)?.who ?? '', this.name);
          out.push(Object.assign(s, { signature }));
        }
        return out;
      },
      listing?.keyring,
    );
    const verdict = checkChain(
      judged,
      witness === undefined ? undefined : { ...witness, record: parseChecked(witness.text, this.name, policy) },
      policy.settings,
    );
    if (!verdict.ok) throw new LockTamperedPageError(this.name, verdict.step, verdict.why);
    writeWitness(policy.checkpointFile, verdict.head);
  }

  private async write(
    key: string,
    expectedRevision: string | null,
    steps: readonly ChainStep[],
    next: LockRecord,
    meta: CasMeta,
    restart = false,
  ): Promise<CasResult> {
    if (this.#gitDir === undefined)
      throw new LockStorageError(this.name, "A signed lock page is written only from a clone (its signing key is git's).");
    this.#signer ??= stepSigner(this.#gitDir, this.#openpgp);
    this.#signer.catch(() => {
      this.#signer = undefined;
    });
    const signer = await this.#signer;
    const text = encodeRecord(next);
    // A heartbeat right after the same holder's heartbeat of the same grant replaces it (heartbeatRenewals.ts).
    const run = restart ? undefined : coalescedStep(steps, text);
    const tip = steps.length === 0 ? undefined : digestOf(steps[steps.length - 1].r);
    const p = run?.p ?? (restart ? null : (tip ?? null));
    const step: ChainStep = { p, r: text, s: await signStep(signer, stepMessage(key, p, text, run?.h)), ...(run ? { h: run.h } : {}) };
    // Written in the layout this version writes (chainLayout.ts), whatever layout it was read in.
    const window = appendStep(restart ? [] : run ? steps.slice(0, -1) : steps, step);
    const written = await this.#inner.compareAndSwap(key, expectedRevision, window.envelope, meta);
    if (written.ok) {
      this.remember(written.revision, key, window.envelope, { ok: true, layout: window.envelope.lockstepChain, steps: window.steps });
      // This clone's own step on top of what it proved is proven to it: a store later set back past it reads tampered here.
      const file = this.#witnessFile;
      const seen = file === undefined ? undefined : readWitness(file)?.digest;
      if (file !== undefined && (restart || (p !== null && seen === p) || (run !== undefined && seen === tip)))
        writeWitness(file, { digest: digestOf(text), text });
    }
    return written;
  }

  private remember(revision: string, key: string, value: unknown, chain: ReadChain = readChain(value)): ReadChain {
    this.#read.delete(revision);
    this.#read.set(revision, { key, value, chain });
    while (this.#read.size > 16) this.#read.delete(this.#read.keys().next().value as string);
    return chain;
  }
}

/** A page whose chain a later version of Lockstep wrote: refused as such, never read as free or tampered (an adopt would overwrite it). */
function newerLayout(driver: string, why: string): LockStorageError {
  return new LockStorageError(
    driver,
    `The lock page was written by a newer version of Lockstep: ${why} Upgrade Lockstep in this clone (and the server guard, and the check) to read or write it; do not adopt over it with this version.`,
  );
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseChecked(text: string, driver: string, policy: SigningPolicy): LockRecord | undefined {
  try {
    return parseRecord(JSON.parse(text), driver, policy.container, policy.settings);
  } catch {
    return undefined;
  }
}

function readWitness(file: string): Witness | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Witness>;
    return typeof value.digest === 'string' && typeof value.text === 'string' && digestOf(value.text) === value.digest
      ? { digest: value.digest, text: value.text }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Atomically, so that two processes of the clone leave one whole witness. */
function writeWitness(file: string, witness: Witness): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomically(file, JSON.stringify(witness), "The clone's witness of the signed chain");
}
