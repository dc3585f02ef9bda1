import * as assert from 'node:assert/strict';
import { line, PROOF, seen } from '../helpers/pushSeen';
import { checkLeaseUpdate } from '../../src/core/guard/leaseUpdate';
import { carriesProof, checkProofLeak, effectiveOptions, proofsSent } from '../../src/core/guard/proofLeak';
import { checkCompaction, recordCommitShape } from '../../src/core/guard/recordHistory';
import { recordRefOf, ruleFor } from '../../src/core/guard/refRules';
import { describeServerSettings, newServerSettings, parseServerSettings, pusherIdentity } from '../../src/core/guard/serverSettings';
import { keyDigest, namespaceDigest } from '../../src/core/names';

/** The server guard's pure rules: which ref gets which rule, lease counters, commit shapes, pinned settings, proof leaks. */

const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const fileText = (extra: object = {}) =>
  JSON.stringify({ container: CONTAINER, protectedBranches: ['main'], operators: ['ops@example.com'], serverGuard: true, ...extra });
const pinned = (extra: object = {}, options: Parameters<typeof newServerSettings>[2] = {}) =>
  newServerSettings(fileText(extra), { branch: 'main', commit: 'a'.repeat(40) }, options);
const Z = '0'.repeat(40);
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('server guard rules (pure)', () => {
  describe('ruleFor', () => {
    const git = pinned({ driver: 'git' });
    const record = recordRefOf(git);

    it('a protected branch, also by the name of a symbolic ref that leads to it, and also on creation and deletion', () => {
      for (const [oldSha, newSha] of [
        [A, B],
        [Z, B],
        [A, Z],
      ]) {
        assert.deepEqual(ruleFor(git, { oldSha, newSha, ref: 'refs/heads/main', target: 'refs/heads/main' }), {
          kind: 'branch',
          branch: 'main',
        });
      }
      assert.deepEqual(ruleFor(git, { oldSha: A, newSha: B, ref: 'refs/heads/trunk', target: 'refs/heads/main' }), {
        kind: 'branch',
        branch: 'main',
      });
      assert.deepEqual(ruleFor(git, { oldSha: A, newSha: B, ref: 'refs/heads/feature', target: 'refs/heads/feature' }), { kind: 'pass' });
      assert.deepEqual(ruleFor(git, { oldSha: A, newSha: B, ref: 'refs/tags/v1', target: 'refs/tags/v1' }), { kind: 'pass' });
    });

    it("the container's record ref, its namespace's lease refs, and nothing else under refs/lockstep/", () => {
      assert.equal(record, `refs/lockstep/${namespaceDigest('lockstep')}/records/${keyDigest('lockstep', `container:${CONTAINER}`)}`);
      assert.deepEqual(ruleFor(git, { oldSha: A, newSha: B, ref: record, target: record }), { kind: 'record' });
      const lease = `refs/lockstep/${namespaceDigest('lockstep')}/leases/${'c'.repeat(64)}`;
      assert.deepEqual(ruleFor(git, { oldSha: Z, newSha: B, ref: lease, target: lease }), { kind: 'lease' });
      assert.equal(ruleFor(git, { oldSha: A, newSha: Z, ref: record, target: record }).kind, 'refuse', 'deletion');
      const other = `refs/lockstep/${namespaceDigest('other')}/records/${'d'.repeat(64)}`;
      assert.equal(ruleFor(git, { oldSha: Z, newSha: B, ref: other, target: other }).kind, 'refuse');
      assert.equal(ruleFor(git, { oldSha: A, newSha: B, ref: 'refs/heads/x', target: record }).kind, 'refuse', 'an alias of a lock ref');
      // Without the git driver, refs/lockstep/ is not Lockstep's store here.
      assert.deepEqual(ruleFor(pinned(), { oldSha: A, newSha: B, ref: record, target: record }), { kind: 'pass' });
    });
  });

  describe('checkLeaseUpdate', () => {
    const live = { v: 1 as const, counter: 4, owner: 'e'.repeat(64), expiresAt: 10_000 };
    it('a claim raises the counter by exactly one, only once the lease is no longer live', () => {
      assert.equal(checkLeaseUpdate(null, { ...live, counter: 1 }, 0), undefined);
      assert.equal(checkLeaseUpdate({ stored: live }, { ...live, counter: 5, owner: 'f'.repeat(64) }, 20_000), undefined);
      assert.match(checkLeaseUpdate({ stored: live }, { ...live, counter: 5, owner: 'f'.repeat(64) }, 5_000) ?? '', /still live/);
      assert.match(checkLeaseUpdate({ stored: live }, { ...live, counter: 9 }, 20_000) ?? '', /rise by one/);
      assert.match(checkLeaseUpdate({ stored: live }, { ...live, counter: 3 }, 20_000) ?? '', /rise by one/);
      assert.match(checkLeaseUpdate(null, { ...live, counter: 0 }, 0) ?? '', /start with a claim/);
      assert.match(checkLeaseUpdate(null, { ...live, counter: 4 }, 0) ?? '', /rise by one/);
      assert.match(checkLeaseUpdate({ stored: live }, { ...live, owner: 'f'.repeat(64) }, 20_000) ?? '', /only a claim/);
      assert.match(checkLeaseUpdate({ stored: live }, { v: 1, counter: 'x' }, 0) ?? '', /damaged/);
    });
    it("a claim needs the lease ended by the server's clock: a millisecond early is refused, the moment it ends is accepted", () => {
      const claim = { ...live, counter: 5, owner: 'f'.repeat(64) };
      assert.match(checkLeaseUpdate({ stored: live }, claim, live.expiresAt - 1) ?? '', /still live by the server's clock/);
      assert.equal(checkLeaseUpdate({ stored: live }, claim, live.expiresAt), undefined);
    });
    it('an existing ref whose record is damaged refuses every update, never read as absent (no counter restarts at 1)', () => {
      const restart = { ...live, counter: 1 };
      assert.equal(checkLeaseUpdate(null, restart, 20_000), undefined, 'control: a new ref starts at 1');
      for (const stored of [undefined, null, 'text', { v: 1, counter: 'x' }, { ...live, owner: 'not a digest' }, { ...live, v: 2 }]) {
        for (const update of [restart, { ...live, counter: 5 }, { ...live, owner: null, expiresAt: 0 }]) {
          const why = checkLeaseUpdate({ stored }, update, 20_000) ?? '';
          assert.match(
            why,
            /current record is damaged.*never treated as absent.*restores the ref from its history/,
            JSON.stringify(stored),
          );
        }
      }
    });
    it('release (owner to null) and extend keep the counter', () => {
      assert.equal(checkLeaseUpdate({ stored: live }, { ...live, owner: null, expiresAt: 0 }, 0), undefined);
      assert.equal(checkLeaseUpdate({ stored: live }, { ...live, expiresAt: 99_000 }, 0), undefined);
    });
  });

  describe('recordCommitShape and checkCompaction', () => {
    const files = { record: 'record.json', audit: 'audit.log' };
    it('one commit on top of the last, a first parentless commit, or a snapshot; never a rewind or an unrelated history', () => {
      assert.deepEqual(recordCommitShape(A, { parents: [A], files: ['record.json'], snapshot: false }, files), { kind: 'transition' });
      assert.deepEqual(recordCommitShape(null, { parents: [], files: ['record.json'], snapshot: false }, files), { kind: 'transition' });
      assert.deepEqual(recordCommitShape(A, { parents: [], files: ['audit.log', 'record.json'], snapshot: true }, files), {
        kind: 'compaction',
      });
      assert.equal(
        recordCommitShape(A, { parents: [B], files: ['record.json'], snapshot: false }, files).kind,
        'refuse',
        'skips or rewinds',
      );
      assert.equal(recordCommitShape(A, { parents: [], files: ['record.json'], snapshot: false }, files).kind, 'refuse', 'unrelated');
      assert.equal(recordCommitShape(A, { parents: [A], files: ['record.json', 'x'], snapshot: false }, files).kind, 'refuse');
      assert.equal(recordCommitShape(null, { parents: [A], files: ['record.json'], snapshot: false }, files).kind, 'refuse');
    });
    it('a compaction keeps the record and the newest entries of the history', () => {
      assert.equal(checkCompaction({ record: 'r', auditLog: 'l' }, { record: 'r', auditLog: 'l' }, 10_000), undefined);
      assert.match(checkCompaction({ record: 'r', auditLog: 'l' }, { record: 'R', auditLog: 'l' }, 10_000) ?? '', /record unchanged/);
      assert.match(
        checkCompaction({ record: 'r', auditLog: 'l\nm\n' }, { record: 'r', auditLog: 'm\n' }, 10_000) ?? '',
        /newest 10,000 entries/,
      );
    });
  });

  describe('pinned settings', () => {
    it('round-trip through the file, and a damaged or tampered file is a configuration error', () => {
      const s = pinned({ driver: 'git' }, { store: { redisUrl: 'redis://u:pw@h:1/0' } });
      assert.deepEqual(parseServerSettings(JSON.stringify(s)), s);
      assert.throws(() => parseServerSettings('{'), /not valid JSON/);
      assert.throws(() => parseServerSettings(JSON.stringify({ ...s, requireProof: 'yes' })), /requireProof/);
      assert.throws(() => parseServerSettings(JSON.stringify({ ...s, file: { ...s.file, driver: 'nope' } })), /driver/);
      assert.throws(() => pinned({ container: 'not-a-uuid' }), /container/);
    });
    it('describe prints no password', () => {
      const lines = describeServerSettings(pinned({}, { store: { databaseUrl: 'postgres://bob:hunter2@db:5432/x' } })).join('\n');
      assert.doesNotMatch(lines, /hunter2|bob:/);
      assert.match(lines, /postgres:\/\/\*\*\*@db:5432\/x/);
    });
    it('the pusher is the mapped identity of the variable the server sets, and nobody else', () => {
      const s = pinned({}, { pushers: { variable: 'REMOTE_USER', identities: { alice: 'alice@example.com' } } });
      assert.deepEqual(pusherIdentity(s, { REMOTE_USER: 'alice' }), { identity: 'alice@example.com' });
      assert.match((pusherIdentity(s, { REMOTE_USER: 'mallory' }) as { refusal: string }).refusal, /mallory has no Lockstep identity/);
      assert.match((pusherIdentity(s, {}) as { refusal: string }).refusal, /did not say who pushes/);
      assert.match((pusherIdentity(s, { REMOTE_USER: 'constructor' }) as { refusal: string }).refusal, /no Lockstep identity/);
      assert.deepEqual(pusherIdentity(pinned(), { REMOTE_USER: 'alice' }), { identity: undefined });
    });
  });

  describe('proof leaks (client guard)', () => {
    it('an empty value resets the configured list; options on the command line replace it', () => {
      assert.deepEqual(effectiveOptions(['a', '', 'b']), ['b']);
      assert.equal(carriesProof(seen({ config: [...PROOF, ['push.pushoption', '']] })), false);
      assert.equal(carriesProof(seen(line('-o', 'ci.skip', 'fork'))), false);
      assert.equal(
        carriesProof(seen(line('-o', 'ci.skip', '--no-push-option', 'fork'))),
        true,
        '--no-push-option empties the typed list: the configured one goes',
      );
      assert.equal(carriesProof(seen(line('--push-opt=x', 'fork'))), false);
      assert.equal(carriesProof(seen()), true);
      assert.deepEqual(proofsSent(seen()), ['a'.repeat(64)]);
    });
    it('refuses another remote, a signed push and submodule recursion, each saying how to push without the proof', () => {
      assert.equal(checkProofLeak(seen()), undefined);
      assert.match(
        checkProofLeak(seen({ remoteName: 'fork', pushUrl: 'git://fork/x.git' })) ?? '',
        /goes to fork.*git -c push\.pushOption= push fork/,
      );
      assert.match(checkProofLeak(seen(line('--signed', 'origin'))) ?? '', /signed push .*--no-signed/);
      assert.match(checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', 'if-asked']] })) ?? '', /signed push/);
      assert.equal(checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', 'true']], ...line('--no-signed') })), undefined);
      assert.match(checkProofLeak(seen(line('--recurse-submodules=on-demand'))) ?? '', /submodules/);
      assert.match(checkProofLeak(seen({ config: [...PROOF, ['push.recursesubmodules', 'on-demand']] })) ?? '', /submodules/);
      assert.equal(
        checkProofLeak(seen({ remoteName: 'fork', pushUrl: 'git://fork/x.git', config: [] })),
        undefined,
        'no proof, nothing to leak',
      );
    });
    it('compares the URL git pushes to with the URL the shared remote is fetched from, not names (pushurl, pushInsteadOf)', () => {
      const redirected = checkProofLeak(seen({ pushUrl: 'git://fork/x.git' })) ?? '';
      assert.match(
        redirected,
        /This push of origin goes to another URL than the one origin is fetched from \(remote\.origin\.pushurl or a url\.\*\.pushInsteadOf setting\)/,
      );
      assert.ok(!redirected.includes('fork/x.git'), 'no URL is repeated (it may hold a credential)');
      assert.equal(checkProofLeak(seen({ remoteName: 'mirror' })), undefined, 'another name for the same URL is the shared remote');
      assert.equal(checkProofLeak(seen({ remoteName: 'git://shared/x.git' })), undefined, 'the URL itself, without a name');
      assert.match(
        checkProofLeak(seen({ remoteName: 'https://me:secret@fork/x.git', pushUrl: 'https://me:secret@fork/x.git' })) ?? '',
        /goes to a URL that is not the container's shared remote .*git -c push\.pushOption= push URL …/,
      );
      assert.ok(
        !(checkProofLeak(seen({ remoteName: 'https://me:secret@fork/x.git', pushUrl: 'https://me:secret@fork/x.git' })) ?? '').includes(
          'secret',
        ),
      );
      assert.match(
        checkProofLeak(seen({ sharedUrls: [] })) ?? '',
        /the container's shared remote/,
        'a shared remote that is not configured matches nothing',
      );
      assert.match(checkProofLeak(seen({ pushUrl: '' })) ?? '', /the container's shared remote/);
    });
    it('reads every spelling git accepts: abbreviations, --no- forms, values, config booleans, the last setting winning', () => {
      for (const args of [
        ['--sign'],
        ['--sig'],
        ['--signed=on'],
        ['--signed=1'],
        ['--signed=YES'],
        ['--signed=if-asked'],
        ['--no-signed', '--signed'],
        ['--signed=bogus'],
      ]) {
        assert.match(checkProofLeak(seen(line(...args, 'origin'))) ?? '', /signed push/, args.join(' '));
      }
      for (const args of [['--no-signed'], ['--no-sign'], ['--signed=off'], ['--signed=0'], ['--signed='], ['--signed', '--no-sig']]) {
        assert.equal(
          checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', 'true']], ...line(...args, 'origin') })),
          undefined,
          args.join(' '),
        );
      }
      for (const value of ['1', 'yes', 'On', 'TRUE', 'if-asked', 'IF-ASKED', '0x1', '2k', null]) {
        assert.match(checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', value]] })) ?? '', /signed push/, String(value));
      }
      for (const value of ['0', 'no', 'off', 'false', '', '0k']) {
        assert.equal(checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', value]] })), undefined, value);
      }
      assert.equal(
        checkProofLeak(seen({ config: [...PROOF, ['push.gpgsign', 'yes'], ['push.gpgsign', 'no']] })),
        undefined,
        'the last value wins',
      );
      for (const args of [
        ['--recurse-sub=on-demand'],
        ['--recurse-submodules', 'on-demand'],
        ['--recu=only'],
        ['--no-recurse-submodules', '--recurse-submodules=on-demand'],
      ]) {
        assert.match(checkProofLeak(seen(line(...args, 'origin'))) ?? '', /submodules/, args.join(' '));
      }
      assert.equal(checkProofLeak(seen(line('--recurse-submodules=check', 'origin'))), undefined);
      assert.equal(checkProofLeak(seen({ config: [...PROOF, ['submodule.recurse', 'true']], ...line('--no-recurse-sub') })), undefined);
      for (const value of ['true', 'yes', '1', null]) {
        assert.match(
          checkProofLeak(seen({ config: [...PROOF, ['push.recursesubmodules', 'check'], ['submodule.recurse', value]] })) ?? '',
          /submodules/,
          `submodule.recurse=${value}`,
        );
      }
      assert.equal(
        checkProofLeak(seen({ config: [['submodule.recurse', 'true'], ...PROOF, ['push.recursesubmodules', 'check']] })),
        undefined,
        'the later push.recurseSubmodules wins',
      );
      assert.equal(checkProofLeak(seen(line('--', 'origin', '--signed'))), undefined, 'after --, --signed is a refspec');
    });
  });
});
