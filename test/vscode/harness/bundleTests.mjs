// Bundles the in-host extension tests (test/vscode/extension/*.ts) for the extension host: one CommonJS file
// per entry in out/vscode-tests/; `vscode` comes from the host, and packages (mocha, the drivers'
// clients) from the project's node_modules, so each file holds only the tests and the project's own sources.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './codeServer.mjs';

export async function bundleExtensionTests() {
  const source = path.join(PROJECT_ROOT, 'test/vscode/extension');
  const outdir = path.join(PROJECT_ROOT, 'out/vscode-tests');
  fs.rmSync(outdir, { recursive: true, force: true });
  const entryPoints = fs
    .readdirSync(source)
    .filter(f => f === 'index.ts' || f.endsWith('.test.ts'))
    .map(f => path.join(source, f));
  await esbuild.build({
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    external: ['vscode'],
    packages: 'external',
    logLevel: 'warning',
  });
  return path.join(outdir, 'index.js');
}
