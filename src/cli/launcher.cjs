#!/usr/bin/env node
'use strict';
// dist/cli.js: what `bin` and the git hooks run (scripts/build.mjs copies it next to the bundles).
// It turns on Node's compile cache (Node >= 22.1; a no-op before) and only then loads a bundle, so
// that later runs skip compiling it. Each run loads only the bundle its command needs: the guards
// (`lockstep guard ...`, run by the hooks on every push) and the holder's everyday commands have
// their own smaller bundles; anything else (other commands, global options first, --help) loads
// the whole command line.
try { require('node:module').enableCompileCache?.(); } catch { /* no cache: compile as usual */ }
const word = process.argv[2];
const bundle = word === 'guard' ? './guard-main.js'
  : word === 'status' || word === 'acquire' || word === 'heartbeat' || word === 'release' ? './holder-main.js'
  : './cli-main.js';
require(bundle).runCli();
