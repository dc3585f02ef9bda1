// Bundles the library, the command line and (when present) the VS Code extension with esbuild.
// Types are checked separately (`npm run typecheck`); declarations come from tsc for the library.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const production = process.argv.includes('--production');
const common = {
  bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: !production, minify: production,
  logLevel: 'warning',
  // Native or optional backends stay outside the bundle and load only when their driver is chosen.
  external: ['vscode', 'better-sqlite3', 'pg-native', 'cpu-features'],
};
const entries = [
  { entryPoints: ['src/core/index.ts'], outfile: 'dist/index.js' },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
];
if (fs.existsSync('src/extension/extension.ts')) entries.push({ entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' });
if (fs.existsSync('media/lockPage.ts')) entries.push({ entryPoints: ['media/lockPage.ts'], outfile: 'dist/media/lockPage.js', platform: 'browser', format: 'iife', external: [] });

if (process.argv.includes('--watch')) {
  // Rebuilds on change; the "[watch] build finished" lines feed the esbuild problem matcher in .vscode/tasks.json.
  const contexts = await Promise.all(entries.map(e => esbuild.context({ ...common, ...e, logLevel: 'info' })));
  await Promise.all(contexts.map(c => c.watch()));
  console.log('[watch] build finished, watching for changes…');
  await new Promise(() => undefined);
}
await Promise.all(entries.map(e => esbuild.build({ ...common, ...e })));
fs.chmodSync('dist/cli.js', 0o755);
// Declarations for library users (`--no-types` skips them for quick local iterations).
if (!process.argv.includes('--no-types')) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
}
