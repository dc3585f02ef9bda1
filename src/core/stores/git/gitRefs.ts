import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { LockConfigurationError, LockStorageError, LockWriteDeclinedError } from '../../errors';
import { namespaceDigest } from '../../names';
import { failure, GitError, redact } from '../../git/gitError';
import type { GitOutput, GitRunner } from '../../git/runner';
import { signingSetup, signsCheckedSteps } from '../../git/signingKey';

/**
 * The git plumbing of the git driver: where a value lives (one ref per key on the remote), how it is
 * read (fetch that one ref, then read its commit from the clone's object store) and how it is
 * written (a new commit made with plumbing, pushed with an explicit expected old value).
 *
 * Layout on the remote: `refs/lockstep/<sha256(namespace)>/<kind>/<key digest>` → a commit whose
 * tree holds `record.json` (the value) and, for a compacted history, `audit.log`. Ref names carry
 * digests only, never a lock name. The clone keeps what it fetched under
 * `refs/lockstep-remotes/<sha256(remote)[:16]>/…`, which is never a branch anyone checks out.
 */

export type RefKind = 'records' | 'leases';

export const RECORD_FILE = 'record.json';
export const AUDIT_FILE = 'audit.log';
/** Trailer that makes every commit unique, so that a push can never be an "up to date" no-op. */
export const WRITE_TRAILER = 'Lockstep-Write';
/** Trailer of a snapshot commit made by compaction; its value is the number of audit entries kept. */
export const SNAPSHOT_TRAILER = 'Lockstep-Snapshot';
/** Records are bounded so that a damaged or hostile ref cannot exhaust memory. */
export const MAX_RECORD_BYTES = 1024 * 1024;

const REF_ROOT = 'refs/lockstep/';
const OBJECT_NAME = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The remote ref of one key. */
export function lockRef(prefix: string, kind: RefKind, key: string): string {
  return `${REF_ROOT}${namespaceDigest(prefix)}/${kind}/${key}`;
}

export function isObjectName(text: string): boolean {
  return OBJECT_NAME.test(text);
}

export interface StoredValue {
  /** The commit SHA: the record's revision. */
  readonly revision: string;
  /** The text of `record.json`. */
  readonly text: string;
}

export type FetchOutcome = 'fetched' | 'absent' | 'busy';
export type PushOutcome =
  | { readonly kind: 'pushed' }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'refused'; readonly reason: string };

export interface TreeFile {
  readonly name: string;
  readonly content: string;
}

export interface CommitInfo {
  readonly revision: string;
  /** Committer time, epoch milliseconds. */
  readonly time: number;
  readonly author: string;
  readonly summary: string;
  /** Set on snapshot commits made by compaction. */
  readonly snapshot: boolean;
}

/** A commit of a record's history with what git says of its signature (see {@link GitRefs.signedLog}). */
export interface SignedCommit {
  readonly revision: string;
  readonly parents: readonly string[];
  /** git's `%G?`: G a good signature by a listed key, N none, B bad, U/E/X/Y/R not verified. */
  readonly status: string;
  /** git's `%GS`: the principal the allowed signers list gives the key ('' when none). */
  readonly signer: string;
  /** git's `%GP`: an OpenPGP signature's primary key fingerprint ('' for SSH, and when gpg found no key). */
  readonly primaryKey: string;
  readonly snapshot: boolean;
}

/** Neutral identity used only when the clone has none configured (commit-tree would refuse). */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: 'Lockstep',
  GIT_AUTHOR_EMAIL: 'lockstep@localhost',
  GIT_COMMITTER_NAME: 'Lockstep',
  GIT_COMMITTER_EMAIL: 'lockstep@localhost',
};
const NO_IDENTITY =
  /Author identity unknown|Committer identity unknown|unable to auto-detect email|empty ident name|Please tell me who you are/i;
/** commit-tree's parent is not in the clone's object store. */
const MISSING_PARENT = /not a valid (?:object|'commit' object)|bad object|unable to read/i;
/** Another process of this clone is updating the same tracking ref. */
const LOCAL_REF_BUSY = /cannot lock ref|Unable to create '.*\.lock'|but expected|unable to update local ref/i;

export class GitRefs {
  /**
   * `gitRemote: '.'`: the clone is the store itself (a server-side guard in the remote's own
   * repository). Refs are then read where they are, with no fetch and no tracking refs.
   */
  readonly local: boolean;
  private readonly trackingRoot: string;
  private identityEnv: Readonly<Record<string, string>> | undefined;
  /** Whether this clone signs its commits (asked once, on the first write). */
  private signingKey: Promise<boolean> | undefined;
  private directory: Promise<string> | undefined;

  /**
   * `signing`: `required` signs every commit with the user's git signing key and refuses to write
   * without one (the container's history must be signed); `auto` signs when a key is configured and
   * writes unsigned when git cannot sign. `openpgp`: a required signature may be git's OpenPGP
   * signing too (the container lists openpgpSigners); otherwise it is SSH. The key stays git's
   * business: nothing of it reaches argv.
   */
  constructor(
    private readonly git: GitRunner,
    readonly remote: string,
    private readonly signing: 'required' | 'auto' = 'auto',
    private readonly openpgp = false,
  ) {
    this.local = remote === '.';
    this.trackingRoot = `refs/lockstep-remotes/${createHash('sha256').update(remote).digest('hex').slice(0, 16)}/`;
  }

  /** The remote as it may be printed: no credentials of a URL (docs/leases.md#secrets). */
  toJSON(): object {
    return { remote: redact(this.remote), local: this.local };
  }
  [inspect.custom](): string {
    return `GitRefs { remote: ${redact(this.remote)} }`;
  }

  trackingRef(ref: string): string {
    return this.local ? ref : this.trackingRoot + ref.slice(REF_ROOT.length);
  }

  /**
   * Fetches one remote ref into its tracking ref: one round trip, and no pack at all when the clone
   * already has the commit. `busy`: another process of this clone was updating the same tracking
   * ref (git refuses to move it from a value it did not read, so a tracking ref never goes back).
   */
  async fetch(ref: string): Promise<FetchOutcome> {
    if (this.local) return 'fetched';
    const tracking = this.trackingRef(ref);
    const output = await this.git.run([
      '-c',
      'fetch.writeCommitGraph=false',
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-auto-gc',
      '--no-recurse-submodules',
      '--no-show-forced-updates',
      // Negotiate with this ref's previous tip only (the glob also matches when it is still absent).
      `--negotiation-tip=${tracking}*`,
      '--end-of-options',
      this.remote,
      `+${ref}:${tracking}`,
    ]);
    if (output.code === 0) return 'fetched';
    if (/couldn't find remote ref/i.test(output.stderr)) return 'absent';
    if (LOCAL_REF_BUSY.test(output.stderr)) return 'busy';
    throw failure(output, 'fetch');
  }

  /**
   * Reads the fetched value: the commit, its `record.json`, and the commit again, in one
   * `cat-file --batch`. `moved` when the tracking ref moved in between (the caller reads again),
   * `missing` when there is no tracking ref (for a local store: no record).
   */
  async readTracking(ref: string): Promise<StoredValue | 'missing' | 'moved'> {
    const tracking = this.trackingRef(ref);
    const output = await this.git.run(['cat-file', '--batch'], { input: `${tracking}\n${tracking}:${RECORD_FILE}\n${tracking}\n` });
    if (output.code !== 0) throw failure(output, 'cat-file');
    const [commit, record, again] = parseBatch(output.stdout);
    if (commit === null && again === null) return 'missing';
    if (commit === null || again === null || again.name !== commit.name) return 'moved';
    if (commit.type !== 'commit') throw damaged('it is not a commit');
    if (record === null) throw damaged(`its commit has no ${RECORD_FILE}`);
    if (record.type !== 'blob') throw damaged(`its ${RECORD_FILE} is not a file`);
    if (record.content.length > MAX_RECORD_BYTES) throw damaged(`its ${RECORD_FILE} is larger than ${MAX_RECORD_BYTES} bytes`);
    return { revision: commit.name, text: record.content.toString('utf8') };
  }

  /** The current values of remote refs (one round trip for any number of refs). */
  async lsRemote(refs: readonly string[]): Promise<Map<string, string>> {
    const stdout = await this.git.raw(['ls-remote', '--end-of-options', this.remote, ...refs]);
    const wanted = new Set(refs);
    const heads = new Map<string, string>();
    for (const line of stdout.split('\n')) {
      const [sha, name] = line.split('\t');
      if (name !== undefined && wanted.has(name) && isObjectName(sha)) heads.set(name, sha);
    }
    return heads;
  }

  /**
   * Creates a commit in the clone's object store: one blob per file, a tree, a commit with
   * `message` (plus a random write trailer, see {@link WRITE_TRAILER}). Null when `parent` is not
   * in the clone (the caller fetches and tries again). `stamp`: the author and committer to write
   * (a record's, derived from its audit line); none: the clone's configured identity.
   */
  async writeCommit(
    files: readonly TreeFile[],
    parent: string | null,
    message: string,
    trailers: readonly string[] = [],
    stamp?: Readonly<Record<string, string>>,
  ): Promise<string | null> {
    const entries: string[] = [];
    for (const file of files) {
      const blob = (await this.git.raw(['hash-object', '-w', '--stdin'], { input: file.content })).trim();
      entries.push(`100644 blob ${blob}\t${file.name}\n`);
    }
    const tree = (await this.git.raw(['mktree'], { input: entries.join('') })).trim();
    const body = [`${WRITE_TRAILER}: ${randomBytes(8).toString('hex')}`, ...trailers].join('\n');
    const input = `${message}\n\n${body}\n`;
    // UTF-8 whatever the clone's i18n.commitEncoding says: no `encoding` header the guard would refuse.
    const commitArgs = (sign: boolean) => [
      '-c',
      'i18n.commitEncoding=UTF-8',
      'commit-tree',
      sign ? '-S' : '--no-gpg-sign',
      tree,
      ...(parent === null ? [] : ['-p', parent]),
      '-F',
      '-',
    ];
    const sign = await this.shouldSign();
    let args = commitArgs(sign);
    // A courtesy signature whose key waits on a passphrase nobody will type: written unsigned instead.
    const unanswered = (error: unknown) => {
      if (!(sign && this.signing === 'auto' && error instanceof GitError && error.kind === 'timeout')) throw error;
      return { code: 128, stdout: Buffer.alloc(0), stderr: 'signing timed out' };
    };
    let output: GitOutput = await this.git.run(args, { input, env: stamp ?? this.identityEnv }).catch(unanswered);
    if (output.code !== 0 && sign && !NO_IDENTITY.test(output.stderr) && !MISSING_PARENT.test(output.stderr)) {
      if (this.signing === 'required') {
        throw new LockConfigurationError(
          "git could not sign the lock record's commit with your signing key, and this container requires signed steps" +
            ' (allowedSigners in .lockstep.json). Check that user.signingkey names a key you have (an SSH key: gpg.format=ssh;' +
            ' an OpenPGP key, where the container lists openpgpSigners: gpg.format=openpgp and its fingerprint) and that its agent runs;' +
            ' lockstep doctor shows the set-up.',
          { setting: 'user.signingkey', cause: failure(output, 'commit-tree') },
        );
      }
      // Signing is a courtesy here: nobody checks it, so a key git cannot use never stops a write.
      this.signingKey = Promise.resolve(false);
      args = commitArgs(false);
      output = await this.git.run(args, { input, env: stamp ?? this.identityEnv });
    }
    if (output.code !== 0 && stamp === undefined && this.identityEnv === undefined && NO_IDENTITY.test(output.stderr)) {
      // The clone has no user.name/user.email: write with a neutral identity rather than fail.
      this.identityEnv = FALLBACK_IDENTITY;
      output = await this.git.run(args, { input, env: this.identityEnv });
    }
    if (output.code !== 0) {
      if (parent !== null && MISSING_PARENT.test(output.stderr)) return null;
      throw failure(output, 'commit-tree');
    }
    return output.stdout.toString('utf8').trim();
  }

  /**
   * Whether to sign: `required` always, refusing without a signing key of a kind the page checks
   * (SSH, or OpenPGP where the container lists openpgpSigners); `auto` when git has an SSH signing
   * key (a GPG key may wait on a passphrase prompt).
   */
  private shouldSign(): Promise<boolean> {
    const openpgp = this.openpgp && this.signing === 'required';
    this.signingKey ??= signingSetup(this.git).then(setup => signsCheckedSteps(setup, openpgp));
    return this.signingKey.then(usable => {
      if (!usable && this.signing === 'required') {
        this.signingKey = undefined;
        throw new LockConfigurationError(
          'This container requires every step of its lock page to be signed (allowedSigners in .lockstep.json), and git has no' +
            ` ${openpgp ? 'SSH or OpenPGP' : 'SSH'} signing key here. Set one — an SSH key: \`git config --global gpg.format ssh\` and` +
            ' `git config --global user.signingkey ~/.ssh/id_ed25519.pub`, its public key listed for your identity in the allowed signers file' +
            (openpgp
              ? '; or a GPG key: `git config --global gpg.format openpgp` and `git config --global user.signingkey FINGERPRINT`, its fingerprint listed for your identity in openpgpSigners and its public key in openpgpKeys'
              : ' (a GPG key signs only where the container lists openpgpSigners)') +
            ' by an operator; lockstep doctor shows the set-up.',
          { setting: 'user.signingkey' },
        );
      }
      return usable;
    });
  }

  /**
   * Pushes `commit` to `ref` only if the remote ref is still `expected` (null: must not exist).
   * git checks the lease against the ref it was shown and the remote updates the ref under its
   * lock only from that old value, so two writers on the same base never both succeed.
   */
  async push(commit: string, ref: string, expected: string | null): Promise<PushOutcome> {
    const output = await this.git.run([
      'push',
      '--porcelain',
      '--no-verify',
      '--no-follow-tags',
      '--no-signed',
      '--recurse-submodules=no',
      `--force-with-lease=${ref}:${expected ?? ''}`,
      '--end-of-options',
      this.remote,
      `${commit}:${ref}`,
    ]);
    const status = pushStatus(output, ref);
    if (status === null) throw failure(output, 'push');
    // ' ' fast-forward, '+' forced, '*' new ref. '=' (already there) cannot happen for a fresh
    // commit; it is never reported as a successful write.
    if (status.flag === ' ' || status.flag === '+' || status.flag === '*') return { kind: 'pushed' };
    // "[rejected] (stale info)": git's own check of the lease against the ref it was shown.
    if (status.flag === '=' || status.summary.startsWith('[rejected]')) return { kind: 'conflict' };
    // "[remote rejected] (…)": the remote's ref lock saw another value — or a hook, a permission,
    // a full disk. The caller tells them apart by looking at the ref.
    return { kind: 'refused', reason: redact(status.summary) + guardSaid(output.stderr) };
  }

  /**
   * Whether `revision` has a first-parent ancestor `generations` back: one local `git rev-parse`, which
   * walks that many commits and no further (a record's history is first-parent only).
   */
  async hasAncestor(revision: string, generations: number): Promise<boolean> {
    if (!isObjectName(revision) || !Number.isSafeInteger(generations) || generations < 0) return false;
    const output = await this.git.run(['rev-parse', '--verify', '--quiet', `${revision}~${generations}^{commit}`]);
    return output.code === 0;
  }

  /** First-parent history from `revision`, newest first. */
  async log(revision: string, limit: number): Promise<CommitInfo[]> {
    const format = `%H%x1f%ct%x1f%an%x1f%s%x1f%(trailers:key=${SNAPSHOT_TRAILER},valueonly,separator=)%x1e`;
    const stdout = await this.git.raw([
      'log',
      '--first-parent',
      '--no-show-signature',
      `--format=${format}`,
      ...(Number.isFinite(limit) ? [`--max-count=${limit}`] : []),
      '--end-of-options',
      revision,
      '--',
    ]);
    const commits: CommitInfo[] = [];
    for (const chunk of stdout.split('\x1e')) {
      const fields = chunk.replace(/^\n/, '').split('\x1f');
      if (fields.length < 5) continue;
      const [sha, seconds, author, summary, snapshot] = fields;
      commits.push({ revision: sha, time: Number(seconds) * 1000, author, summary, snapshot: snapshot.trim() !== '' });
    }
    return commits;
  }

  /**
   * The first-parent history from `tip` down, newest first, stopping at (and leaving out) what
   * `verified` reaches, each commit with its signature as git verifies it against the allowed
   * signers file at `allowedSignersFile` (an absolute path) and, for OpenPGP, the keyring `env`'s
   * GNUPGHOME names. One git process (git runs ssh-keygen or gpg per commit); a `verified` commit the
   * clone no longer has is treated as none.
   */
  async signedLog(
    tip: string,
    verified: string | undefined,
    allowedSignersFile: string,
    env: Readonly<Record<string, string>> = {},
  ): Promise<SignedCommit[]> {
    // %GP (never %GT: git 2.39 aborts on it for a signature gpg cannot check) tells OpenPGP from SSH.
    const format = `%H%x1f%P%x1f%G?%x1f%GS%x1f%GP%x1f%(trailers:key=${SNAPSHOT_TRAILER},valueonly,separator=)%x1e`;
    const stop = verified !== undefined && isObjectName(verified) && (await this.hasCommit(verified)) ? [`^${verified}`] : [];
    const stdout = await this.git.raw(
      [
        '-c',
        `gpg.ssh.allowedSignersFile=${allowedSignersFile}`,
        'log',
        '--first-parent',
        `--format=${format}`,
        '--end-of-options',
        tip,
        ...stop,
        '--',
      ],
      { env },
    );
    const commits: SignedCommit[] = [];
    for (const chunk of stdout.split('\x1e')) {
      const fields = chunk.replace(/^\n/, '').split('\x1f');
      if (fields.length < 6) continue;
      const [revision, parents, status, signer, primaryKey, snapshot] = fields;
      commits.push({
        revision,
        parents: parents.split(' ').filter(p => p !== ''),
        status,
        signer,
        primaryKey,
        snapshot: snapshot.trim() !== '',
      });
    }
    return commits;
  }

  /** The clone's git directory, absolute (`.git` of a clone; the repository itself when bare): asked once. */
  gitDirectory(): Promise<string> {
    this.directory ??= this.findGitDirectory();
    return this.directory;
  }

  private async findGitDirectory(): Promise<string> {
    // A clone's top folder (what a container passes) holds it: no git process. Elsewhere (a bare repository, a
    // linked worktree, a subfolder) git says where it is.
    const dotGit = path.join(this.git.dir, '.git');
    if (fs.statSync(dotGit, { throwIfNoEntry: false })?.isDirectory()) return dotGit;
    return (await this.git.raw(['rev-parse', '--absolute-git-dir'])).trim();
  }

  /** Whether the clone has `revision` as a commit. */
  async hasCommit(revision: string): Promise<boolean> {
    return (await this.git.run(['cat-file', '-e', '--end-of-options', `${revision}^{commit}`])).code === 0;
  }

  /**
   * One file of each of `revisions`, in one `cat-file --batch`: its bytes, or null where the commit
   * has no such file (or it is not a file).
   */
  readFiles(revisions: readonly string[], name: string): Promise<(Buffer | null)[]> {
    return this.readBlobs(revisions.map(revision => ({ revision, name })));
  }

  /**
   * Files of commits (each a revision and a file name), in one `cat-file --batch`: each one's bytes, or
   * null where its commit has no such file (or it is not a file).
   */
  async readBlobs(files: readonly { readonly revision: string; readonly name: string }[]): Promise<(Buffer | null)[]> {
    if (files.length === 0) return [];
    const output = await this.git.run(['cat-file', '--batch'], { input: files.map(f => `${f.revision}:${f.name}\n`).join('') });
    if (output.code !== 0) throw failure(output, 'cat-file');
    return parseBatch(output.stdout).map(file => (file === null || file.type !== 'blob' ? null : file.content));
  }

  /** A file of a commit; null when it has none. */
  async readFile(revision: string, name: string): Promise<string | null> {
    const output = await this.git.run(['cat-file', '--batch'], { input: `${revision}:${name}\n` });
    if (output.code !== 0) throw failure(output, 'cat-file');
    const [file] = parseBatch(output.stdout);
    return file === null || file.type !== 'blob' ? null : file.content.toString('utf8');
  }
}

export function damaged(what: string, cause?: unknown): LockStorageError {
  return new LockStorageError(
    'git',
    `A lock ref under refs/lockstep/ on the git remote does not hold a valid Lockstep record (${what}), so the lock cannot be treated as free. Inspect the remote's refs/lockstep/ refs and delete or restore the damaged one.`,
    cause === undefined ? {} : { cause },
  );
}

interface BatchObject {
  readonly name: string;
  readonly type: string;
  readonly content: Buffer;
}

/** Parses `git cat-file --batch` output: one entry per query, null for a missing object. */
function parseBatch(stdout: Buffer): (BatchObject | null)[] {
  const objects: (BatchObject | null)[] = [];
  let at = 0;
  while (at < stdout.length) {
    const eol = stdout.indexOf(0x0a, at);
    if (eol < 0) break;
    const header = stdout.subarray(at, eol).toString('utf8');
    at = eol + 1;
    const match = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
    if (!match) {
      objects.push(null); // "<query> missing" or "ambiguous"
      continue;
    }
    const size = Number(match[3]);
    objects.push({ name: match[1], type: match[2], content: stdout.subarray(at, at + size) });
    at += size + 1;
  }
  return objects;
}

/** The porcelain status line of `ref`: `<flag>\t<from>:<to>\t<summary>`; null when git printed none. */
function pushStatus(output: GitOutput, ref: string): { flag: string; summary: string } | null {
  for (const line of output.stdout.toString('utf8').split('\n')) {
    const parts = line.split('\t');
    if (parts.length >= 3 && parts[0].length === 1 && parts[1].endsWith(`:${ref}`)) {
      return { flag: parts[0], summary: parts.slice(2).join('\t') };
    }
  }
  return null;
}

/**
 * The server guard's own words for a refusal (its `remote: lockstep: ` lines: why it refused, in words that hold
 * no token or key), so that a refused lock-ref write says why instead of only "pre-receive hook declined".
 * Bounded; the output escapes control characters, as it does for every message.
 */
function guardSaid(stderr: string): string {
  const said = stderr
    .split('\n')
    .filter(line => line.startsWith('remote: lockstep: '))
    .map(line => line.slice('remote: '.length).trim())
    .join(' ');
  return said === '' ? '' : `; the server guard said: ${redact(said.length > 600 ? `${said.slice(0, 600)}…` : said)}`;
}

/** For callers that must report a refusal that was not a lost race. */
export function refusedError(reason: string): LockWriteDeclinedError {
  const hint = reason.includes('; the server guard said: ')
    ? ' Running it again gets the same answer until what the guard names is put right.'
    : /non-fast-forward/i.test(reason)
      ? ' The remote refuses non-fast-forward updates of lock refs (a host rule or hook); lock refs need them: allow them for refs/lockstep/.'
      : ' Check that your account may push refs under refs/lockstep/ and that no server hook declines them.';
  // git's one-line status for the ref ("[remote rejected] (pre-receive hook declined)", redacted, any lock ref's name
  // cut): it says which of the causes in the hint it was, and names no key.
  const said = reason.replace(/refs\/lockstep\/[^\s'":)]+/g, 'refs/lockstep/…');
  return new LockWriteDeclinedError('git', `The git remote refused to update a lock ref (git said: ${said}).${hint}`, {
    cause: new Error(reason),
  });
}
