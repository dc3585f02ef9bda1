import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { anyCaseGlob } from '../../src/core/hooks/hookScripts';
import { recordRefOf, ruleFor } from '../../src/core/guard/refRules';
import { newServerSettings } from '../../src/core/guard/serverSettings';

/**
 * On macOS and Windows a bare repository's refs live on a case-insensitive filesystem (git sets
 * core.ignorecase): a push to refs/heads/Main writes main's file. The guard's rules take that as an
 * input (a case-folding lookup); these tests give it as each platform's git would.
 */
const CONTAINER = '0b7e2c1a-5d4f-4c3b-9a2e-1f0d3c4b5a69';
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const settings = newServerSettings(JSON.stringify({ container: CONTAINER, protectedBranches: ['main', 'release/2.x'], driver: 'git' }), {
  branch: 'main',
  commit: A,
});
const rule = (ref: string, foldsCase: boolean, target = ref) => ruleFor(settings, { oldSha: A, newSha: B, ref, target }, { foldsCase });

describe('ref rules on a case-insensitive server', () => {
  it('on macOS and Windows (core.ignorecase=true): Main, MAIN and refs/HEADS/main are main, and need the grant', () => {
    for (const ref of ['refs/heads/Main', 'refs/heads/MAIN', 'refs/HEADS/main', 'refs/heads/Release/2.X']) {
      const expected = ref.toLowerCase().endsWith('main') ? 'main' : 'release/2.x';
      assert.deepEqual(rule(ref, true), { kind: 'branch', branch: expected }, ref);
    }
    assert.deepEqual(rule('refs/heads/trunk', true, 'refs/heads/MAIN'), { kind: 'branch', branch: 'main' }, 'an alias, too');
  });

  it('on macOS and Windows: a lock ref spelt in another case is refused (it would write the record by a name no rule knows)', () => {
    const record = recordRefOf(settings);
    assert.deepEqual(rule(record, true), { kind: 'record' });
    for (const ref of [record.replace('refs/lockstep/', 'refs/LockStep/'), record.toUpperCase().replace('REFS/', 'refs/')]) {
      const got = rule(ref, true);
      assert.equal(got.kind, 'refuse', ref);
      assert.match((got as { why: string }).why, /differs from a lock ref only in case/);
    }
  });

  it('on Linux (case-sensitive): Main is another branch and passes, as before', () => {
    assert.deepEqual(rule('refs/heads/Main', false), { kind: 'pass' });
    assert.deepEqual(rule('refs/heads/main', false), { kind: 'branch', branch: 'main' });
  });

  it("the hook's sh fast path matches every spelling of a protected name, so such a push always reaches the guard", () => {
    const glob = anyCaseGlob('refs/heads/release/2.x');
    assert.equal(glob, "[rR][eE][fF][sS]'/'[hH][eE][aA][dD][sS]'/'[rR][eE][lL][eE][aA][sS][eE]'/''2''.'[xX]");
    // One sh for every spelling (a unit test keeps under 100 ms of CPU): a line per ref, 1 where the glob matches.
    const refs = ['refs/heads/release/2.x', 'refs/heads/Release/2.X', 'REFS/HEADS/RELEASE/2.X'];
    const others = ['refs/heads/release/2x', 'refs/heads/release/2.x/more', 'refs/heads/feature'];
    const script = `for r in "$@"; do case "$r" in ${glob}) echo 1 ;; *) echo 0 ;; esac; done`;
    const answers = spawnSync('sh', ['-c', script, 'sh', ...refs, ...others], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n');
    assert.deepEqual(answers, [...refs.map(() => '1'), ...others.map(() => '0')]);
    assert.equal(anyCaseGlob('refs/heads/ünï'), "[rR][eE][fF][sS]'/'[hH][eE][aA][dD][sS]'/'*[nN]*", 'beyond ASCII: any characters');
  });
});
