import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** DESIGN.md: `core` never imports `vscode`, and `cli` imports core only. */
describe('layering', () => {
  function sources(dir: string): string[] {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap(e => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  }
  const importsOf = (file: string) =>
    [...fs.readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\(|require\()\s*['"]([^'"]+)['"]/g)].map(m => m[1]);

  it('src/core imports nothing of vscode', () => {
    const offenders = sources('src/core').filter(f => importsOf(f).some(i => i === 'vscode'));
    assert.deepEqual(offenders, []);
  });

  it('src/core and src/cli import nothing from src/extension', () => {
    const offenders = [...sources('src/core'), ...sources('src/cli')].filter(f => importsOf(f).some(i => i.includes('extension/')));
    assert.deepEqual(offenders, []);
  });
});
