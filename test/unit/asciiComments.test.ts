import * as assert from 'node:assert/strict';
import * as vm from 'node:vm';
import * as esbuild from 'esbuild';
import { asciiComments } from '../../scripts/asciiComments.mjs';

/**
 * scripts/build.mjs gives the bundles dist/cli.js loads ASCII comments (scripts/asciiComments.mjs), so that Node reads
 * them one byte a character. Here on real esbuild output, as the build makes it: the comments esbuild keeps lose their
 * dashes and ellipses, one character for one (every line keeps its length, so the source map stays exact), the code
 * runs the same, and a regular expression that holds such a character is never touched.
 */

/** `source` bundled as the build does (CommonJS for Node, esbuild's default ASCII charset), and its comment-free reading. */
async function built(source: string): Promise<{ code: string; withoutComments: string }> {
  const out = await esbuild.build({
    stdin: { contents: source, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0].text;
  const stripped = await esbuild.transform(code, { loader: 'js', minifyWhitespace: true, legalComments: 'none' });
  return { code, withoutComments: stripped.code };
}

/** What the CommonJS module `code` exports. */
function exportsOf(code: string): Record<string, unknown> {
  const module = { exports: {} as Record<string, unknown> };
  vm.runInNewContext(code, { module, exports: module.exports, require });
  return module.exports;
}

const SOURCE = `
export class Gate {
  /** The word that opened it — or none… (kept by esbuild: a comment in a class body). */
  word = 'open — now…';
  /** Says it → ${'\u{1F512}'} */
  say(): string {
    return this.word;
  }
}
export const said = new Gate().say();
`;

describe('ASCII comments of the launched bundles (scripts/asciiComments.mjs)', () => {
  it('replaces the characters of kept comments one for one, and the code runs the same', async () => {
    const { code, withoutComments } = await built(SOURCE);
    assert.match(code, /[\u0080-\uffff]/, 'esbuild kept a comment with a character outside ASCII (the case at hand)');
    const result = asciiComments(code, withoutComments);
    assert.equal(result.ascii, true);
    assert.doesNotMatch(result.code, /[\u0080-\uffff]/);
    assert.match(result.code, /The word that opened it - or none\. \(kept/);
    assert.deepEqual(
      result.code.split('\n').map(line => line.length),
      code.split('\n').map(line => line.length),
      'every line keeps its length in UTF-16 units (the source map counts columns in them)',
    );
    assert.equal(exportsOf(result.code).said, 'open — now…');
    assert.equal(exportsOf(result.code).said, exportsOf(code).said);
  });

  it('leaves the code as it is when a character outside ASCII is in a regular expression', async () => {
    const { code, withoutComments } = await built(`/** A dash — */\nexport const dashed = /—/.test('a — b');\n`);
    assert.match(withoutComments, /\/—\//, 'esbuild prints a regular expression as written');
    const result = asciiComments(code, withoutComments);
    assert.deepEqual(result, { code, ascii: false });
    assert.equal(exportsOf(result.code).dashed, true);
  });

  it('leaves ASCII code as it is', () => {
    const code = '"use strict";\n// plain\nmodule.exports = 1;\n';
    assert.deepEqual(asciiComments(code, code), { code, ascii: true });
  });
});
