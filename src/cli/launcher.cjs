#!/usr/bin/env node
'use strict';
// dist/cli.js: what `bin` and the git hooks run (scripts/build.mjs copies it next to the bundles).
// It turns on Node's compile cache (Node >= 22.1; a no-op before) and only then loads a bundle, so
// that later runs skip compiling it. `lockstep guard ...` (the hooks, on every push) loads the
// guards' own smaller bundle; every other command loads the whole command line.
try { require('node:module').enableCompileCache?.(); } catch { /* no cache: compile as usual */ }
require(process.argv[2] === 'guard' ? './guard-main.js' : './cli-main.js').runCli();
