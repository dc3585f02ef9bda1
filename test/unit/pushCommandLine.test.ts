import * as assert from 'node:assert/strict';
import { gitBoolean, gitInteger } from '../../src/core/gitBoolean';
import { parsePushArguments, pushArgumentsOf, recurseMode, signMode, splitCommandLine } from '../../src/core/guard/pushCommandLine';

/** git's reading of a `git push` command line and of boolean settings (`git help push`, `git help config`). */
describe('a git push command line, read as git reads it', () => {
  describe('config booleans (git_parse_maybe_bool)', () => {
    it('true, yes, on and false, no, off in any case; empty is false; a key without a value is true', () => {
      for (const value of ['true', 'TRUE', 'Yes', 'on', null]) assert.equal(gitBoolean(value), true, String(value));
      for (const value of ['false', 'No', 'OFF', '']) assert.equal(gitBoolean(value), false, String(value));
    });
    it('integers as git parses them: decimal, octal, hex, units, within an int; anything else is no boolean', () => {
      for (const value of ['1', '-1', '10', '010', '0x10', '0X1f', '1k', '2M', '1g', ' 1', '+3'])
        assert.equal(gitBoolean(value), true, value);
      for (const value of ['0', '-0', '00', '0x0', '0k']) assert.equal(gitBoolean(value), false, value);
      for (const value of ['1 ', 'tru', 'y', '08', '0x', '1t', '2147483648', '3g', 'if-asked'])
        assert.equal(gitBoolean(value), undefined, value);
      assert.equal(gitInteger('2147483647'), 2147483647);
      assert.equal(gitInteger('-2147483647'), -2147483647);
      assert.equal(gitInteger('2m'), 2 * 1024 * 1024);
    });
    it('--signed takes a boolean or if-asked; push recursion takes false or a mode, never true', () => {
      assert.equal(signMode(null), 'always');
      assert.equal(signMode('If-Asked'), 'if-asked');
      assert.equal(signMode('off'), 'never');
      assert.equal(signMode('maybe'), 'invalid');
      assert.equal(recurseMode('no'), 'off');
      assert.equal(recurseMode('on-demand'), 'on-demand');
      assert.equal(recurseMode('On-Demand'), 'invalid', 'the modes are case-sensitive');
      assert.equal(recurseMode('true'), 'invalid');
    });
  });

  describe('push options (parse-options)', () => {
    it('any unique prefix of a long option, with =value', () => {
      assert.equal(parsePushArguments(['--sign']).signed, 'always');
      assert.equal(parsePushArguments(['--sig=no']).signed, 'never');
      assert.equal(parsePushArguments(['--signed=on']).signed, 'always');
      assert.equal(parsePushArguments(['--recurse-sub=on-demand']).recurseSubmodules, 'on-demand');
      assert.equal(parsePushArguments(['--recu=only']).recurseSubmodules, 'only');
      assert.deepEqual(parsePushArguments(['--push-opt=a', '--push=b']).pushOptions, ['a', 'b']);
    });
    it('a required value may be the next argument; an optional one only with =', () => {
      assert.equal(parsePushArguments(['--recurse-submodules', 'on-demand', 'origin']).recurseSubmodules, 'on-demand');
      assert.deepEqual(parsePushArguments(['--push-option', 'x', 'origin']).pushOptions, ['x']);
      const optional = parsePushArguments(['--signed', 'no', 'origin']);
      assert.equal(optional.signed, 'always', '"no" is the repository here, not the value');
      assert.equal(parsePushArguments(['--repo', '--signed']).signed, undefined, '--repo takes --signed as its value');
    });
    it('--no- forms, abbreviated too; the last word wins; --verify is the negation of --no-verify', () => {
      assert.equal(parsePushArguments(['--signed', '--no-signed']).signed, 'never');
      assert.equal(parsePushArguments(['--signed', '--no-sig']).signed, 'never');
      assert.equal(parsePushArguments(['--no-recurse-sub']).recurseSubmodules, 'off');
      assert.deepEqual(parsePushArguments(['-o', 'a', '--no-push-option', '-o', 'b']).pushOptions, ['b']);
      assert.deepEqual(parsePushArguments(['--verify', '--ver']).doubtful, [], '--ver is ambiguous (verbose, verify) but matters not');
    });
    it('short options cluster; -o takes the rest of the cluster or the next argument', () => {
      assert.deepEqual(parsePushArguments(['-fo', 'x']).pushOptions, ['x']);
      assert.deepEqual(parsePushArguments(['-fuox=y']).pushOptions, ['x=y']);
      assert.deepEqual(parsePushArguments(['-o', '']).pushOptions, [''], 'an empty value is a value');
      assert.equal(parsePushArguments(['-o', '--signed']).signed, undefined, '-o takes --signed as its value');
    });
    it('options and other arguments mix until -- or --end-of-options', () => {
      assert.equal(parsePushArguments(['origin', '--signed', 'main']).signed, 'always');
      assert.equal(parsePushArguments(['origin', '--', '--signed']).signed, undefined);
      assert.equal(parsePushArguments(['--end-of-options', '--signed']).signed, undefined);
    });
    it('an exact name wins over abbreviations; an ambiguity that may matter is doubtful, others are not', () => {
      assert.deepEqual(parsePushArguments(['--force', '--force-with-lease']).doubtful, []);
      assert.deepEqual(parsePushArguments(['--s']).doubtful, ['--s'], 'set-upstream or signed');
      assert.deepEqual(parsePushArguments(['--re=x']).doubtful, ['--re'], 'repo, recurse-submodules or receive-pack');
      assert.deepEqual(parsePushArguments(['--p']).doubtful, ['--p']);
      assert.deepEqual(parsePushArguments(['--f']).doubtful, []);
      assert.equal(parsePushArguments(['--bra', '--all']).signed, undefined, '--branches is another name of --all');
    });
  });

  describe("which words are the push's (git options, aliases)", () => {
    const none = new Map<string, string>();
    it("skips git's own options, with their values", () => {
      assert.deepEqual(pushArgumentsOf(['git', '-c', 'push.gpgSign=1', 'push', 'origin'], none), ['origin']);
      assert.deepEqual(pushArgumentsOf(['git', '-C', 'push', '--no-pager', 'push', '--sign'], none), ['--sign']);
      assert.deepEqual(pushArgumentsOf(['git', '--git-dir=x', 'push'], none), []);
      assert.deepEqual(pushArgumentsOf(['/usr/lib/git-core/git-push', '--sign'], none), ['--sign']);
      assert.equal(pushArgumentsOf(['git', 'status'], none), undefined);
    });
    it('expands an alias (and an alias of an alias) as git splits it; a shell alias is not read', () => {
      const aliases = new Map([
        ['p', 'push --signed'],
        ['pp', 'p "--push-option=a b"'],
        ['sh', '!git push --signed'],
      ]);
      assert.deepEqual(pushArgumentsOf(['git', 'P', 'origin'], aliases), ['--signed', 'origin']);
      assert.deepEqual(pushArgumentsOf(['git', 'pp', 'origin'], aliases), ['--signed', '--push-option=a b', 'origin']);
      assert.equal(pushArgumentsOf(['git', 'sh'], aliases), undefined);
      assert.equal(pushArgumentsOf(['git', 'loop'], new Map([['loop', 'loop']])), undefined);
    });
    it('splits alias text as split_cmdline does', () => {
      assert.deepEqual(splitCommandLine(`push  -o 'a b' "c\\"d" e\\ f`), ['push', '-o', 'a b', 'c"d', 'e f']);
      assert.deepEqual(splitCommandLine(`'it''s'`), ['its']);
      assert.equal(splitCommandLine(`push 'open`), undefined);
      assert.equal(splitCommandLine('push \\'), undefined);
    });
  });
});
