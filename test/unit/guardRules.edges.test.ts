import * as assert from 'node:assert/strict';
import { line, PROOF, seen } from '../helpers/pushSeen';
import { checkLeaseUpdate } from '../../src/core/guard/leaseUpdate';
import { carriesProof, checkProofLeak, effectiveOptions, proofsSent } from '../../src/core/guard/proofLeak';
import { recordCommitShape } from '../../src/core/guard/recordHistory';
import { DEFAULT_SKEW_MS } from '../../src/core/chain/recordUpdate';
import { recordRefOf, ruleFor } from '../../src/core/guard/refRules';
import { newServerSettings } from '../../src/core/guard/serverSettings';
import { checkSignedRestart, checkSignedSnapshot, checkSignedStep } from '../../src/core/chain/signedStep';
import * as protocol from '../../src/core/lockRecord';
import { namespaceDigest } from '../../src/core/names';
import { encodeRecord } from '../../src/core/recordCodec';
import { acquireAs, at, fresh, LEAD, ok, OP, SETTINGS } from '../helpers/lockRecordFixture';

/**
 * The edges of the guards' pure rules: the exact refusal of each lock ref, the shapes a record commit
 * may not have, lease claims, the client guard's reading of a push it cannot see fully, and the
 * signed steps with no audit line.
 */

const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const Z = '0'.repeat(40);

describe('server guard rules: edges', () => {
  describe('ruleFor', () => {
    const git = newServerSettings(JSON.stringify({ container: CONTAINER, protectedBranches: ['main'], driver: 'git' }), {
      branch: 'main',
      commit: A,
    });
    const record = recordRefOf(git);
    const leases = `refs/lockstep/${namespaceDigest('lockstep')}/leases/`;
    const rule = (ref: string, target = ref, newSha = B) => ruleFor(git, { oldSha: A, newSha, ref, target });

    it('only refs/heads/ names branches: another ref whose tail is a protected name passes', () => {
      assert.deepEqual(rule('refs/notes/main'), { kind: 'pass' });
      assert.deepEqual(rule('refs/tags/main'), { kind: 'pass' });
    });

    it('each refusal of a lock ref says why', () => {
      assert.deepEqual(rule('refs/heads/x', record), {
        kind: 'refuse',
        why: 'refs/heads/x is a symbolic ref to a lock ref; lock refs are updated only by their own name.',
      });
      assert.deepEqual(rule(record, record, Z), {
        kind: 'refuse',
        why: 'lock refs are never deleted by a push (that would reset the grant or the fencing counter).',
      });
      const notOurs = {
        kind: 'refuse',
        why: "this remote keeps only its own container's lock refs, and this ref is not one of them.",
      };
      assert.deepEqual(rule(`${leases}not-a-digest`), notOurs);
    });

    it('a lease ref is its namespace and exactly one sha256, nothing before or after it', () => {
      const digest = 'c'.repeat(64);
      assert.deepEqual(rule(`${leases}${digest}`), { kind: 'lease' });
      for (const ref of [`${leases}${digest}x`, `${leases}x${digest}`, `${leases}${digest}/more`])
        assert.equal(rule(ref).kind, 'refuse', ref);
    });
  });

  describe('recordCommitShape', () => {
    const files = { record: 'record.json', audit: 'audit.log' };
    const shape = (oldSha: string | null, parents: string[], names: string[], snapshot = false, restart = false) =>
      recordCommitShape(oldSha, { parents, files: names, snapshot }, files, { restart }).kind;

    it('a first record is refused with what it must be', () => {
      assert.deepEqual(recordCommitShape(null, { parents: [], files: ['record.json'], snapshot: true }, files), {
        kind: 'refuse',
        why: 'a new lock record must be one parentless commit holding only its first record.',
      });
    });

    it('a transition is one commit on the last holding only the record: no merge, no other file', () => {
      assert.equal(shape(A, [A], ['record.json']), 'transition', 'control');
      assert.deepEqual(recordCommitShape(A, { parents: [A, B], files: ['record.json'], snapshot: false }, files), {
        kind: 'refuse',
        why: "the update rewinds, replaces or skips the record's history; each write is one commit on top of the last (or a compaction).",
      });
      assert.equal(shape(A, [A], ['other.json']), 'refuse');
    });

    it('a record.json that is not a plain file (a link, an executable, a submodule) is refused as such, not as a rewind', () => {
      for (const mode of ['120000', '100755', '160000']) {
        assert.deepEqual(recordCommitShape(A, { parents: [A], files: [`record.json (mode ${mode})`], snapshot: false }, files), {
          kind: 'refuse',
          why: 'the commit holds an entry that is not a plain file (a symbolic link, an executable, a submodule or a folder); each write holds record.json as a plain file.',
        });
      }
    });

    it('a compaction is a parentless snapshot holding exactly the record and the audit log, in any order', () => {
      assert.equal(shape(A, [], ['record.json', 'audit.log'], true), 'compaction', 'files in any order');
      assert.equal(shape(A, [A], ['audit.log', 'record.json'], true), 'refuse', 'with a parent');
      assert.equal(shape(A, [], ['audit.log', 'record.json'], false), 'refuse', 'without the snapshot trailer');
      assert.equal(shape(A, [], ['audit.log', 'record.json', 'x'], true), 'refuse', 'a third file');
      assert.equal(shape(A, [], ['other.log', 'record.json'], true), 'refuse', 'another log');
      assert.equal(shape(A, [], ['audit.log', 'zzz.json'], true), 'refuse', 'another record');
    });

    it('a restart (signed page) is parentless too', () => {
      assert.equal(shape(A, [], ['record.json'], false, true), 'restart', 'control');
      assert.equal(shape(A, [B], ['record.json'], false, true), 'refuse');
    });
  });

  describe('checkLeaseUpdate', () => {
    it('a claim names its owner; a released lease may be claimed whatever its old expiry said', () => {
      const released = { v: 1 as const, counter: 4, owner: null, expiresAt: 10_000 };
      assert.equal(checkLeaseUpdate({ stored: released }, { ...released, counter: 5 }, 20_000), 'a claim must name its owner.');
      assert.equal(checkLeaseUpdate({ stored: released }, { ...released, counter: 5, owner: 'f'.repeat(64) }, 5_000), undefined);
    });
  });

  describe('proof leaks: what the client guard reads', () => {
    it('the configured options alone when the command line cannot be seen; a typed proof is read as sent', () => {
      assert.deepEqual(effectiveOptions(['x']), ['x']);
      assert.equal(carriesProof(seen({ commandLine: undefined })), true);
      assert.deepEqual(proofsSent(seen({ config: [], ...line('-o', 'lockstep-proof=abc', 'origin') })), ['abc']);
      assert.equal(carriesProof(seen({ config: [['push.pushoption', null], ...PROOF] })), true, 'a key without a value is skipped');
    });

    it('with no command line to see, the configuration alone decides', () => {
      assert.equal(checkProofLeak(seen({ commandLine: undefined })), undefined);
      assert.match(checkProofLeak(seen({ commandLine: undefined, config: [...PROOF, ['push.gpgsign', 'true']] })) ?? '', /signed push/);
      assert.match(
        checkProofLeak(seen({ commandLine: undefined, config: [...PROOF, ['push.recursesubmodules', 'only']] })) ?? '',
        /submodules/,
      );
    });

    it('no push URL is no shared remote, even when a shared URL is empty too', () => {
      assert.match(checkProofLeak(seen({ pushUrl: '', sharedUrls: [''] })) ?? '', /not to the container's shared remote/);
    });

    it('says how to push without the proof and where to land, for a redirected shared remote', () => {
      assert.equal(
        checkProofLeak(seen({ pushUrl: 'git://fork/x.git' })),
        "This push of origin goes to another URL than the one origin is fetched from (remote.origin.pushurl or a url.*.pushInsteadOf setting), not to the container's shared remote, and would hand that repository the proof of your lock. " +
          'Push there without it: git -c push.pushOption= push origin …; to land, push to the URL origin is fetched from.',
      );
    });

    it('an option it cannot tell refuses the push, printed without control characters and cut to 60', () => {
      assert.equal(
        checkProofLeak(seen(line('--s', 'origin'))),
        'Lockstep cannot tell which option --s abbreviates, and it may sign the push or hand its options, with the proof of your lock, to submodules. Spell the option out in full and push again.',
      );
      const odd = { signed: undefined, recurseSubmodules: undefined, pushOptions: [], doubtful: [`--s\u001b[2J${'x'.repeat(100)}`] };
      assert.match(checkProofLeak(seen({ commandLine: odd })) ?? '', new RegExp(`option --s\\?\\[2J${'x'.repeat(53)} abbreviates`));
    });

    it('a recursion value git would refuse, or a submodule.recurse that is no boolean, refuses; an explicit false does not', () => {
      const submodules =
        "git hands the push options of a push that recurses into submodules (--recurse-submodules=on-demand or only, or submodule.recurse) to the submodules' pushes, on their command lines: the proof of your lock would reach the submodules' remotes. " +
        'Push submodules on their own, then push this with --no-recurse-submodules.';
      assert.equal(checkProofLeak(seen(line('--recurse-submodules=bogus', 'origin'))), submodules);
      assert.equal(checkProofLeak(seen({ config: [...PROOF, ['submodule.recurse', 'maybe']] })), submodules);
      assert.equal(
        checkProofLeak(seen({ config: [...PROOF, ['push.recursesubmodules', 'on-demand'], ['submodule.recurse', 'false']] })),
        undefined,
      );
    });
  });

  describe('signed steps', () => {
    const held = acquireAs(fresh(), LEAD, at(0)).record;
    const good = (signer: string) => ({ status: 'G', signer });

    it('a record with no audit line is no step, no compaction and no restart (and never fails the check)', () => {
      const bare = fresh();
      assert.equal(
        checkSignedStep(null, bare, encodeRecord(bare), good(LEAD), SETTINGS),
        'its record has no audit line, so it is no transition of the page.',
      );
      assert.equal(checkSignedSnapshot(bare, good(OP), SETTINGS), 'its record has no audit line to stamp a compaction with.');
      const context = { settings: SETTINGS, now: at(1), skewMs: DEFAULT_SKEW_MS, requireProof: false, pushed: {} };
      assert.match(checkSignedRestart(held, bare, good(OP), context) ?? '', /only an operator's signed lockstep adopt/);
    });

    it("an operator's compaction needs a signature that verifies", () => {
      assert.equal(checkSignedSnapshot(held, good(OP), SETTINGS), undefined, 'control');
      assert.match(checkSignedSnapshot(held, { status: 'B', signer: OP }, SETTINGS) ?? '', /does not verify/);
    });

    it('a restart keeps the identifiers as well as the grant', () => {
      const t = at(5);
      const adopt = (nextIdFloor: number) =>
        ok(protocol.adoptPage(CONTAINER, SETTINGS, { identity: OP, reason: 'repair', grantFloor: 1, nextIdFloor }, t)).record;
      const context = { settings: SETTINGS, now: t, skewMs: DEFAULT_SKEW_MS, requireProof: false, pushed: {} };
      const before = { ...held, nextId: 40 };
      assert.equal(checkSignedRestart(before, adopt(40), good(OP), context), undefined, 'control');
      assert.match(checkSignedRestart(before, adopt(39), good(OP), context) ?? '', /identifiers from 40 or higher/);
    });
  });
});
