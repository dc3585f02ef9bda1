import * as fs from 'node:fs';

/**
 * What a TypeScript source imports, read fast enough for the unit suite (test/unit/layers.test.ts): a regular
 * expression over the text, where the TypeScript scanner (`ts.preProcessFile`) takes about 200 ms of CPU for the
 * tree. The integration suite (test/integration/importScanner.test.ts) checks that both read the same imports from
 * every file of `src/`, so a form this misses, or a comment it mistakes for an import, fails there.
 */

/** Every `.ts` file under `dir` (relative paths with `/`, as `dir` is given). */
export function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap(e => (e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : []));
}

/** `import … from`, `export … from` (over several lines too), `import('…')`, `require('…')` and a bare `import '…'`. */
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]/gm;

/** The module specifiers a source's text imports, as written, in order. */
export function importSpecifiers(text: string): string[] {
  return [...text.matchAll(IMPORT)].map(m => (m[1] ?? m[2] ?? m[3] ?? m[4])!);
}
