// Mutation testing of the core rules (issue #27, docs/mutation.md). Run it with `LOCKSTEP_MUTATE=1 npm run mutate`;
// it is never part of `npm test` (scripts/test-all.sh).
//
// The mocha options are .mocharc.unit.json's without test/helpers/unitSpeed.ts: its CPU-time rule would fail whole
// runs under Stryker's instrumentation, which is slower by design. LOCKSTEP_MUTATE_SPEC (comma-separated globs)
// narrows the unit test files for a quicker run of a few source files: Stryker's mocha runner cannot reload a
// module, so every mutant that also runs when a module loads (a fixture built inside a `describe`) costs a fresh
// test process, which loads every listed test file.
const spec = process.env.LOCKSTEP_MUTATE_SPEC ? process.env.LOCKSTEP_MUTATE_SPEC.split(',') : ['test/unit/**/*.test.ts'];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  plugins: ['@stryker-mutator/mocha-runner'],
  testRunner: 'mocha',
  mochaOptions: {
    spec,
    require: ['tsx/cjs', 'tsx/esm', './test/helpers/privateHome.ts'],
    extension: ['ts'],
    'no-config': true,
    'no-package': true,
  },
  coverageAnalysis: 'perTest',
  // A static mutant (one that only runs while a module loads) needs a whole unit run in a fresh process each;
  // they took 95 % of the time and are reported as ignored.
  ignoreStatic: true,
  mutate: [
    'src/core/lockRecord.ts',
    'src/core/record/*.ts',
    'src/core/chain/*.ts',
    'src/core/guard/*.ts',
    'src/core/bounds.ts',
    'src/core/recordCodec.ts',
    'src/core/config.ts',
    'src/core/jsonSchemaCheck.ts',
    'src/core/fencing.ts',
  ],
  // Two cores, shared: one test process, and a timeout that tolerates a busy machine.
  concurrency: 1,
  timeoutMS: 20000,
  timeoutFactor: 3,
  dryRunTimeoutMinutes: 15,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['dist', 'out', '.vscode-test', 'test-artifacts', 'bench/results', 'reports', '*.vsix', '.lockstep-cache'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
};
