import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as ts from 'typescript';
import { importSpecifiers, sourceFiles } from '../helpers/sourceImports';

/**
 * The layer check of the unit suite (test/unit/layers.test.ts) reads imports with a regular expression, to stay
 * under the unit suite's 100 ms; here the TypeScript scanner reads every file of `src/` too, and both must agree,
 * so that the layer check sees every import TypeScript sees and nothing else.
 */
describe('import scanner: the layer check reads the imports TypeScript reads', () => {
  it('finds, in every file of src/, the same module specifiers as ts.preProcessFile', () => {
    const differences: string[] = [];
    for (const file of sourceFiles('src')) {
      const text = fs.readFileSync(file, 'utf8');
      const expected = ts.preProcessFile(text, true, true).importedFiles.map(f => f.fileName);
      const actual = importSpecifiers(text);
      if (JSON.stringify([...expected].sort()) !== JSON.stringify([...actual].sort())) {
        differences.push(`${file}: TypeScript reads [${expected.join(', ')}], the layer check [${actual.join(', ')}]`);
      }
    }
    assert.deepEqual(differences, []);
  });
});
