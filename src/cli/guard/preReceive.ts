import * as fs from 'node:fs';
import {
  AUDIT_FILE,
  AUDIT_LOG_KEEP,
  checkCompaction,
  checkLeaseUpdate,
  checkRecordCommit,
  checkRecordUpdate,
  checkSignedRestart,
  checkSignedSnapshot,
  checkSigner,
  compactionSubject,
  guardWitnessFile,
  fenceServerPush,
  lastAuditLine,
  type LeaseBefore,
  LockConfigurationError,
  LockError,
  LockFencedError,
  type LockRecord,
  MAX_ALLOWED_SIGNERS_BYTES,
  MAX_OPENPGP_FILE_BYTES,
  MAX_RECORD_BYTES,
  type OpenpgpListingText,
  PageWithoutClone,
  parseRecord,
  parseServerSettings,
  pinnedDriftWarning,
  pusherIdentity,
  pushOptionsFromEnv,
  RECORD_FILE,
  recordCommitShape,
  type RefUpdate,
  refusalGist,
  ruleFor,
  SECOND,
  SERVER_SETTINGS_FILE,
  serverContainerSettings,
  serverDriverOptions,
  type ServerProof,
  type ServerSettings,
  SNAPSHOT_TRAILER,
  stampOf,
  type StepSignature,
  transitionSubject,
  ZERO_SHA,
} from '../../core/application';
import { parseCommandArgs } from '../args';
import type { CommandContext } from '../command';
import { parsePreReceive, readStdin } from './hookInput';
import { ServerRepo } from './serverRepo';

/** A compaction's audit.log holds the newest 2,000 entries (about 600 KB); bounded too, far above that. */
const MAX_AUDIT_LOG_BYTES = 64 * 1024 * 1024;

/**
 * `lockstep guard pre-receive --settings FILE` (the shared remote's hook): the real fence. It
 * decides only with the settings pinned at install time (FILE) and what git hands a hook (the
 * updates, the push options, the quarantined objects): no `.lockstep.json` from any branch (the
 * pinned branch's is read only to warn that the pinned settings are stale), no `LOCKSTEP_*` variable. Every rule is a pure function of src/core/guard; this file reads.
 * Anything it cannot read refuses the push.
 */
export async function guardPreReceive(context: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(context.args, { settings: { type: 'string' } });
  const input = await readStdin();
  // Once per push: the pinned settings, the one git runner of the repository, and the page (its store
  // settings resolved here, its driver opened on first use, closed when the push is decided).
  const settings = loadSettings(values.settings);
  const repo = new ServerRepo(context.cwd, context.env);
  const page = new PageWithoutClone(settings.file, context.cwd, serverDriverOptions(settings, context.cwd));
  // Stale pinned settings are said to the pusher (stderr), beside the decision and never changing it.
  const stale = pinnedDriftWarning(repo.git, settings).catch(() => undefined);
  try {
    return await decide(context, input, settings, repo, page);
  } finally {
    await page.close();
    const warning = await stale;
    if (warning !== undefined) context.out.note(`lockstep: warning: ${warning}`);
  }
}

async function decide(
  context: CommandContext,
  input: string,
  settings: ServerSettings,
  repo: ServerRepo,
  page: PageWithoutClone,
): Promise<number> {
  const pushed = pushOptionsFromEnv(context.env);
  const now = Date.now();
  let record: LockRecord | undefined;
  const currentRecord = async (ref: string): Promise<LockRecord> => {
    record ??= await readRecord(page, signedChainProof(settings, context.cwd, repo), ref, pushed.grant);
    return record;
  };

  // Whether the server's filesystem folds case is asked of git only for a ref whose rule it changes (a name that
  // differs from a guarded one only in case), once per push: any other ref is judged alike either way.
  let foldsCase: Promise<boolean> | undefined;
  const ruleOf = async (update: RefUpdate) => {
    const exact = ruleFor(settings, update, { foldsCase: false });
    if (JSON.stringify(exact) === JSON.stringify(ruleFor(settings, update, { foldsCase: true }))) return exact;
    foldsCase ??= repo.foldsCase();
    return ruleFor(settings, update, { foldsCase: await foldsCase });
  };
  for (const raw of parsePreReceive(input)) {
    const update: RefUpdate = { ...raw, target: await repo.resolveRef(raw.ref) };
    const rule = await ruleOf(update);
    switch (rule.kind) {
      case 'pass':
        break;
      case 'refuse':
        throw new LockFencedError(`refused ${update.ref}: ${rule.why}`, 0);
      case 'branch': {
        if (!settings.requireProof) break;
        const verdict = fenceServerPush(await currentRecord(update.ref), pushed, now);
        if (verdict) {
          // Audited on the page (folded when repeated); the pusher's name only where the server knows it.
          // Not with the git driver: there the page is a ref of this repository, and a refused push must
          // leave every ref as it was (an attacker would otherwise grow its history at will).
          const pusher = pusherIdentity(settings, context.env);
          if (settings.file.driver !== 'git')
            await page.auditRefusedPush(
              {
                identity: 'identity' in pusher && pusher.identity !== undefined ? pusher.identity : 'unknown pusher',
                grant: pushed.grant ?? 0,
                detail: `server guard refused a push to ${update.ref.replace('refs/heads/', '')}: ${refusalGist(verdict.message)}`,
              },
              now,
            );
          throw new LockFencedError(`refused ${update.ref}: ${verdict.message}`, verdict.currentGrant, verdict.presentedGrant);
        }
        break;
      }
      case 'record': {
        const problem = await checkRecordRef(repo, settings, update, { now, pushed, env: context.env });
        if (problem)
          throw new LockFencedError(`refused the lock record's update: ${problem} Lock records change only through lockstep.`, 0);
        break;
      }
      case 'lease': {
        const problem = await checkLeaseRef(repo, update, now);
        if (problem) throw new LockFencedError(`refused a lease ref's update: ${problem}`, 0);
        break;
      }
    }
  }
  return 0;
}

function loadSettings(file: string | undefined): ServerSettings {
  if (file === undefined) {
    throw new LockConfigurationError(
      `The server guard was installed without its pinned settings, so every push is refused. Run lockstep hooks install --server in this repository again.`,
      { setting: SERVER_SETTINGS_FILE },
    );
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (cause) {
    throw new LockConfigurationError(
      `The server guard's pinned settings (${SERVER_SETTINGS_FILE}) could not be read, so every push is refused. Run lockstep hooks install --server again.`,
      { setting: SERVER_SETTINGS_FILE, cause },
    );
  }
  return parseServerSettings(text);
}

async function readRecord(
  page: PageWithoutClone,
  proof: ServerProof | undefined,
  ref: string,
  presented: number | undefined,
): Promise<LockRecord> {
  try {
    // No environment: the store is what was pinned, whatever the pusher's variables say.
    return (await page.read(proof)).record;
  } catch (error) {
    const why = error instanceof LockError ? error.message : 'unexpected failure';
    throw new LockFencedError(`${ref} is protected and the lock could not be checked, so the push is refused — ${why}`, 0, presented, {
      cause: error,
    });
  }
}

async function checkRecordRef(
  repo: ServerRepo,
  settings: ServerSettings,
  update: RefUpdate,
  context: { now: number; pushed: { grant?: number; proof?: string }; env: Readonly<Record<string, string | undefined>> },
): Promise<string | undefined> {
  const oldSha = ZERO_SHA.test(update.oldSha) ? null : update.oldSha;
  const commit = await repo.commit(update.newSha);
  if (commit === undefined) return 'the new value is not a commit.';
  const shape = recordCommitShape(
    oldSha,
    commit,
    { record: RECORD_FILE, audit: AUDIT_FILE },
    { restart: settings.file.allowedSigners !== undefined },
  );
  if (shape.kind === 'refuse') return shape.why;
  const afterFile = await repo.file(update.newSha, RECORD_FILE);
  if (afterFile === 'absent') return `the new commit holds no ${RECORD_FILE}.`;
  if (afterFile === 'too large') return `the new ${RECORD_FILE} is larger than ${MAX_RECORD_BYTES} bytes, more than any reader reads.`;
  const beforeFile = oldSha === null ? 'absent' : await repo.file(oldSha, RECORD_FILE);
  if (beforeFile === 'too large')
    return `the current ${RECORD_FILE} is larger than ${MAX_RECORD_BYTES} bytes; the server's administrator restores the ref from its history.`;
  const afterText = afterFile.text;
  const beforeText = beforeFile === 'absent' ? null : beforeFile.text;
  const container = settings.file.container;
  if (shape.kind === 'compaction') {
    const auditLog = await repo.auditLogOf(oldSha as string);
    const pushedLog = await repo.file(update.newSha, AUDIT_FILE, MAX_AUDIT_LOG_BYTES);
    const problem = checkCompaction(
      { record: beforeText ?? '', auditLog },
      { record: afterText, auditLog: typeof pushedLog === 'object' ? pushedLog.text : '' },
      AUDIT_LOG_KEEP,
    );
    if (problem) return problem;
    const line = lastAuditLine(parseRecordText(afterText, container, settings));
    if (line === undefined) return 'the record has no audit line to stamp its compaction with.';
    const entries = auditLog.split('\n').filter(l => l !== '').length;
    const record = parseRecordText(afterText, container, settings);
    const unsigned =
      record === undefined
        ? undefined
        : await signedBy(repo, settings, update.newSha, signature => checkSignedSnapshot(record, signature, settings.file));
    return (
      unsigned ??
      checkRecordCommit(commit.text, {
        parents: [],
        stamp: stampOf(line),
        subject: compactionSubject(entries),
        trailers: [`${SNAPSHOT_TRAILER}: ${entries}`],
      })
    );
  }
  const after = parseRecordText(afterText, container, settings);
  if (after === undefined) return 'the new record is damaged (not a valid lock record of this container).';
  if (shape.kind === 'restart') {
    // An operator's signed adopt over a signed page (its history unproven, or signing just turned on).
    const problem = await signedBy(repo, settings, update.newSha, signature =>
      checkSignedRestart(beforeText === null ? undefined : parseRecordText(beforeText, container, settings), after, signature, {
        settings: serverContainerSettings(settings),
        now: context.now,
        skewMs: settings.skewSeconds * SECOND,
        requireProof: false,
        pushed: {},
        afterText,
      }),
    );
    const line = after.audit[after.audit.length - 1];
    return problem ?? checkRecordCommit(commit.text, { parents: [], stamp: stampOf(line), subject: transitionSubject(line) });
  }
  const before = beforeText === null ? null : parseRecordText(beforeText, container, settings);
  if (before === undefined) return "the current record is damaged; the server's administrator restores the ref from its history.";
  const pusher = pusherIdentity(settings, context.env);
  if ('refusal' in pusher) return pusher.refusal;
  const problem = checkRecordUpdate(before, after, {
    settings: serverContainerSettings(settings),
    now: context.now,
    skewMs: settings.skewSeconds * SECOND,
    requireProof: settings.requireProof,
    pushed: context.pushed,
    afterText,
    ...(pusher.identity !== undefined ? { pusher: pusher.identity } : {}),
  });
  if (problem) return problem;
  // The commit says what the record says: its subject, author and date derive from the new audit line.
  const line = after.audit[after.audit.length - 1];
  const unsigned = await signedBy(repo, settings, update.newSha, signature => checkSigner(signature, line.who));
  if (unsigned !== undefined) return unsigned;
  return checkRecordCommit(commit.text, { parents: commit.parents, stamp: stampOf(line), subject: transitionSubject(line) });
}

/**
 * Where the pinned settings require a signed page (allowedSigners), why the pushed commit's signature
 * does not prove its step, judged against the allowed signers file on the pinned protected branch.
 */
async function signedBy(
  repo: ServerRepo,
  settings: ServerSettings,
  sha: string,
  judge: (signature: StepSignature) => string | undefined,
): Promise<string | undefined> {
  const where = settings.file.allowedSigners;
  if (where === undefined) return undefined;
  const branch = settings.file.protectedBranches[0];
  const signers = await repo.file(`refs/heads/${branch}`, where, MAX_ALLOWED_SIGNERS_BYTES);
  if (typeof signers !== 'object') {
    return `this container requires signed lock records, and the protected branch ${branch} has no allowed signers file of at most ${MAX_ALLOWED_SIGNERS_BYTES / 1024} KiB at ${where}; an operator lands it first.`;
  }
  const openpgp = await openpgpListing(repo, settings);
  if (typeof openpgp === 'string') return openpgp;
  const why = judge(await repo.signature(sha, signers.text, openpgp));
  return why === undefined ? undefined : `this container requires signed lock records: ${why}`;
}

/** The pinned settings' OpenPGP listing on the pinned protected branch; undefined when they name none, a sentence when it is not there. */
async function openpgpListing(repo: ServerRepo, settings: ServerSettings): Promise<OpenpgpListingText | undefined | string> {
  const { openpgpSigners, openpgpKeys } = settings.file;
  if (openpgpSigners === undefined || openpgpKeys === undefined) return undefined;
  const branch = settings.file.protectedBranches[0];
  const signers = await repo.file(`refs/heads/${branch}`, openpgpSigners, MAX_OPENPGP_FILE_BYTES);
  const keys = await repo.file(`refs/heads/${branch}`, openpgpKeys, MAX_OPENPGP_FILE_BYTES);
  if (typeof signers !== 'object' || typeof keys !== 'object') {
    return `this container lists OpenPGP signers, and the protected branch ${branch} has no openpgpSigners file at ${openpgpSigners} and openpgpKeys file at ${openpgpKeys} of at most ${MAX_OPENPGP_FILE_BYTES / 1024} KiB each; an operator lands them first.`;
  }
  return { signers: signers.text, keys: keys.text };
}

/**
 * A signed page on a store whose writers are all participants (file, SQL, Redis, etcd) is proven before the
 * guard believes it: with the allowed signers (and OpenPGP listing) of the pinned protected branch, from the guard's own
 * witness in this repository (the last page it proved), so that a step dropped from the store since
 * the guard last looked reads tampered.
 */
function signedChainProof(settings: ServerSettings, repo: string, server: ServerRepo): ServerProof | undefined {
  const where = settings.file.allowedSigners;
  if (where === undefined || settings.file.driver === 'git') return undefined;
  const branch = settings.file.protectedBranches[0];
  return {
    allowedSigners: async () => {
      const signers = await server.file(`refs/heads/${branch}`, where, MAX_ALLOWED_SIGNERS_BYTES);
      if (typeof signers !== 'object') {
        throw new LockConfigurationError(
          `This container requires a signed lock page, and the protected branch ${branch} has no allowed signers file of at most ${MAX_ALLOWED_SIGNERS_BYTES / 1024} KiB at ${where}; an operator lands it first.`,
          { setting: 'allowedSigners' },
        );
      }
      return signers.text;
    },
    ...(settings.file.openpgpSigners !== undefined
      ? {
          openpgp: async () => {
            const listing = await openpgpListing(server, settings);
            if (typeof listing !== 'object') {
              const why = listing ?? 'this container names no OpenPGP listing.';
              throw new LockConfigurationError(`${why[0].toUpperCase()}${why.slice(1)}`, { setting: 'openpgpSigners' });
            }
            return listing;
          },
        }
      : {}),
    witnessFile: guardWitnessFile(repo, settings.file.container),
  };
}

function parseRecordText(text: string, container: string, settings: ServerSettings): LockRecord | undefined {
  try {
    return parseRecord(JSON.parse(text), 'git', container, serverContainerSettings(settings));
  } catch {
    return undefined;
  }
}

async function checkLeaseRef(repo: ServerRepo, update: RefUpdate, now: number): Promise<string | undefined> {
  const commit = await repo.commit(update.newSha);
  if (commit === undefined) return 'the new value is not a commit.';
  const after = await leaseRecordOf(repo, update.newSha);
  // An existing ref whose record cannot be read is damaged, never absent (checkLeaseUpdate refuses it).
  const before: LeaseBefore = ZERO_SHA.test(update.oldSha)
    ? null
    : { stored: (await repo.commit(update.oldSha)) === undefined ? undefined : await leaseRecordOf(repo, update.oldSha) };
  if (after === 'too large' || before?.stored === 'too large') return `a lease record is larger than ${MAX_RECORD_BYTES} bytes.`;
  return checkLeaseUpdate(before, after, now);
}

/** The parsed record of a lease ref's commit; undefined when it holds no JSON record. */
async function leaseRecordOf(repo: ServerRepo, sha: string): Promise<unknown> {
  const file = await repo.file(sha, RECORD_FILE);
  if (file === 'absent' || file === 'too large') return file === 'too large' ? file : undefined;
  try {
    return JSON.parse(file.text);
  } catch {
    return undefined;
  }
}
