import * as assert from 'node:assert/strict';
import { parsePushArguments, pushArgumentsOf, splitCommandLine } from '../../src/core/guard/pushCommandLine';

/**
 * The edges of reading a `git push` command line (pushCommandLine.ts): what is not an option that
 * matters stays out of the reading, what cannot be read is doubtful, and unusual argv never throws.
 */
describe('a git push command line: edges', () => {
  const none = new Map<string, string>();

  describe('options', () => {
    it('only -o / --push-option give push options: other options, with or without values, add none', () => {
      assert.deepEqual(parsePushArguments(['--verbose', '--force', '--repo', 'r', '--thin', '-o', 'x']).pushOptions, ['x']);
      assert.deepEqual(parsePushArguments(['--porcelain', '--atomic']).pushOptions, []);
    });

    it('a name followed by more letters is not that option', () => {
      assert.equal(parsePushArguments(['--signedoff']).signed, undefined);
      assert.equal(parsePushArguments(['--signed-x=1']).signed, undefined);
      assert.equal(parsePushArguments(['--recurse-submodulesx=on-demand']).recurseSubmodules, undefined);
    });

    it('--no and its abbreviations may negate any option, so they are doubtful; so is an option with no name before =', () => {
      assert.deepEqual(parsePushArguments(['--no']).doubtful, ['--no']);
      assert.deepEqual(parsePushArguments(['--no-']).doubtful, ['--no-']);
      assert.deepEqual(parsePushArguments(['--=on']).doubtful, ['--']);
    });

    it('an option unknown to this table, long or short, is passed over without failing', () => {
      assert.deepEqual(parsePushArguments(['--frobnicate', '--signed']), {
        signed: 'always',
        recurseSubmodules: undefined,
        pushOptions: [],
        doubtful: [],
      });
      assert.deepEqual(parsePushArguments(['-z', '-o', 'x']).pushOptions, ['x']);
      assert.deepEqual(parsePushArguments(['-fzo', 'x']).pushOptions, [], 'the cluster ends at the unknown letter');
    });
  });

  describe("the push's words", () => {
    it('no words, or only git options, are not a push (and never fail)', () => {
      assert.equal(pushArgumentsOf([], none), undefined);
      assert.equal(pushArgumentsOf(['git', '--version'], none), undefined);
      assert.equal(pushArgumentsOf(['git', '-c', 'push.gpgSign=1'], none), undefined);
    });

    it('follows aliases of aliases 16 deep, and not 17', () => {
      const chain = (depth: number) =>
        new Map(Array.from({ length: depth }, (_, i) => [`a${i}`, i === depth - 1 ? 'push --signed' : `a${i + 1}`] as [string, string]));
      assert.deepEqual(pushArgumentsOf(['git', 'a0', 'origin'], chain(16)), ['--signed', 'origin']);
      assert.equal(pushArgumentsOf(['git', 'a0', 'origin'], chain(17)), undefined);
    });

    it('an alias whose text git cannot split is not read; one that only ends in ! is no shell alias', () => {
      assert.equal(pushArgumentsOf(['git', 'p'], new Map([['p', "push 'open"]])), undefined);
      assert.deepEqual(pushArgumentsOf(['git', 'p'], new Map([['p', 'push origin!']])), ['origin!']);
    });

    it('a backslash is literal inside single quotes, an escape inside double quotes', () => {
      assert.deepEqual(splitCommandLine(`'a\\b' "c\\d"`), ['a\\b', 'cd']);
    });
  });
});
