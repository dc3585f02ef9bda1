#!/usr/bin/env node
'use strict';
// dist/cli.js: what `bin` and the git hooks run (scripts/build.mjs copies it next to the bundles).
// Each run loads only the bundle its command needs: the guards (`lockstep guard ...`, run by the
// hooks on every push) and the holder's everyday commands have their own smaller bundles; anything
// else (other commands, global options first, --help) loads the whole command line. The bundle is
// loaded with V8's code cache in a private per-user folder (dist/code-cache.js), so that later runs
// skip compiling it; the server guard's is in the home of the user it runs as (HOME), or none.
const word = process.argv[2];
const bundle = word === 'guard' ? 'guard-main.js'
  : word === 'status' || word === 'acquire' || word === 'heartbeat' || word === 'release' ? 'holder-main.js'
  : 'cli-main.js';
const serverGuard = word === 'guard' && process.argv[3] === 'pre-receive';
let loadBundle;
try {
  ({ loadBundle } = require('./code-cache.js'));
} catch {
  loadBundle = file => require(file); // a copy without it (a packaging slip) still runs, only slower
}
loadBundle(require('node:path').join(__dirname, bundle), { serverGuard }).runCli();
