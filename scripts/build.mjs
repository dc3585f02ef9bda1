// Bundles the library, the command line and (when present) the VS Code extension with esbuild.
// Types are checked separately (`npm run typecheck`); declarations come from tsc for the library.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { asciiBundle, hasNonAscii } from './asciiComments.mjs';

const production = process.argv.includes('--production');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  // Native or optional backends stay outside the bundle and load only when their driver is chosen.
  external: ['vscode', 'better-sqlite3', 'pg-native', 'cpu-features'],
};
// The database, Redis and etcd clients are most of the bundle's weight, and only their driver needs them:
// each is bundled once on its own (dist/vendor/*.js) and required from there when its driver opens,
// so that the command line, the guards and the extension start without parsing them.
const VENDORED = { 'mysql2/promise': 'mysql2-promise', pg: 'pg', ioredis: 'ioredis', etcd3: 'etcd3' };
const vendorPlugin = {
  name: 'vendor',
  setup(build) {
    build.onResolve({ filter: /^(mysql2\/promise|pg|ioredis|etcd3)$/ }, args => ({
      path: `./vendor/${VENDORED[args.path]}.js`,
      external: true,
    }));
  },
};
// `import * as fs from 'node:fs'` makes esbuild copy the module's properties into a new object at every file that
// writes it (__toESM: 19 copies of fs and 22 of path in the guards' bundle, a few milliseconds of each start). Such
// imports of the builtins below go through one module of the bundle that re-exports the builtin: one copy each.
const SHARED_BUILTINS = /^node:(fs|path|os)$/;
const sharedBuiltinsPlugin = {
  name: 'shared-builtins',
  setup(build) {
    build.onResolve({ filter: SHARED_BUILTINS }, args =>
      args.kind === 'import-statement' && args.namespace === 'file' ? { path: args.path, namespace: 'shared-builtin' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'shared-builtin' }, args => ({
      contents: `export * from ${JSON.stringify(args.path)};`,
      loader: 'js',
    }));
  },
};
const vendorEntries = Object.entries(VENDORED).map(([specifier, file]) => ({
  stdin: { contents: `module.exports = require(${JSON.stringify(specifier)});`, resolveDir: process.cwd(), loader: 'js' },
  outfile: `dist/vendor/${file}.js`,
}));
// The bundles dist/cli.js loads through V8's code cache (src/cli/codeCache.cjs): on Node 20 a function compiled
// from that cache cannot import() (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so their import() of a driver's library
// becomes a require (all of them are CommonJS: ./vendor/*.js, better-sqlite3), as esbuild writes it for a target
// without import(). test/helpers/gitFixture.ts bundles them the same way.
const LAUNCHED = { supported: { 'dynamic-import': false }, launched: true };
const entries = [
  { entryPoints: ['src/core/index.ts'], outfile: 'dist/index.js' },
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli-main.js', ...LAUNCHED },
  { entryPoints: ['src/cli/guardMain.ts'], outfile: 'dist/guard-main.js', ...LAUNCHED },
  { entryPoints: ['src/cli/holderMain.ts'], outfile: 'dist/holder-main.js', ...LAUNCHED },
];
if (fs.existsSync('src/extension/extension.ts'))
  entries.push({ entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' });
for (const entry of entries) entry.plugins = [vendorPlugin, sharedBuiltinsPlugin];
entries.push(...vendorEntries);
if (fs.existsSync('media/lockPage.ts'))
  entries.push({
    entryPoints: ['media/lockPage.ts'],
    outfile: 'dist/media/lockPage.js',
    platform: 'browser',
    format: 'iife',
    external: [],
  });

// dist/cli.js (what `bin` and the hooks run) is src/cli/launcher.cjs: it loads, through dist/code-cache.js
// (src/cli/codeCache.cjs: V8's code cache in a private per-user folder), dist/guard-main.js for `lockstep guard …`, dist/holder-main.js for status, acquire,
// heartbeat and release, and dist/cli-main.js for everything else.
// Every file lands by a rename of a complete temporary copy, never written in place: a process that loads dist/
// while another build runs (two test files side by side, each building once; a hook run during a rebuild) reads
// either the old file or the new one, never half of one.
const landWhole = (file, contents, mode) => {
  fs.mkdirSync(file.slice(0, file.lastIndexOf('/')) || '.', { recursive: true });
  const temporary = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, contents, mode === undefined ? {} : { mode });
  fs.renameSync(temporary, file);
};
fs.mkdirSync('dist', { recursive: true });
landWhole('dist/cli.js', fs.readFileSync('src/cli/launcher.cjs'), 0o755);
landWhole('dist/code-cache.js', fs.readFileSync('src/cli/codeCache.cjs'));
// The etcd client reads its gRPC service definitions at run time from `${__dirname}/../proto/`: beside its
// bundle (dist/vendor/etcd3.js) that is dist/proto/.
for (const proto of ['rpc.proto', 'kv.proto', 'auth.proto'])
  landWhole(`dist/proto/${proto}`, fs.readFileSync(`node_modules/etcd3/proto/${proto}`));

if (process.argv.includes('--watch')) {
  // Rebuilds on change; the "[watch] build finished" lines feed the esbuild problem matcher in .vscode/tasks.json.
  const contexts = await Promise.all(entries.map(({ launched, ...e }) => esbuild.context({ ...common, ...e, logLevel: 'info' })));
  await Promise.all(contexts.map(c => c.watch()));
  console.log('[watch] build finished, watching for changes…');
  await new Promise(() => undefined);
}
const built = await Promise.all(entries.map(({ launched, ...e }) => esbuild.build({ ...common, ...e, write: false })));
// A launched bundle whose kept comments hold a character outside ASCII is read by Node as a two-byte string: those
// characters become ASCII stand-ins (scripts/asciiComments.mjs), checked against esbuild's own reading of the code.
const landed = built.flatMap((result, i) =>
  result.outputFiles.map(async out => {
    if (!entries[i].launched || !out.path.endsWith('.js') || !hasNonAscii(out.text)) return landWhole(out.path, out.contents);
    const ascii = await asciiBundle(esbuild, out.text);
    if (!ascii.ascii)
      console.warn(`${out.path}: a character outside ASCII outside a comment (a regular expression?): Node reads it as UTF-16, slower.`);
    landWhole(out.path, ascii.code);
  }),
);
await Promise.all(landed);

// Declarations for library users (`--no-types` skips them for quick local iterations).
if (!process.argv.includes('--no-types')) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
}
