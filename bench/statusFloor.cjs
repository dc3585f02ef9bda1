'use strict';
// bench/cliStart.ts's floor for `lockstep status`: only what any status on the file driver must do, in plain Node
// without Lockstep's code — load the child-process and crypto modules, run the two git processes a container's
// opening runs (its settings and the clone's root) side by side, read .lockstep.json, hash it, print one line.
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');

function git(args) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', process.cwd(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', chunk => out.push(chunk));
    child.on('error', reject);
    child.on('close', code => (code === 0 ? resolve(Buffer.concat(out).toString('utf8')) : reject(new Error(`git ${args[0]} exited ${code}`))));
  });
}

Promise.all([
  git(['config', '-z', '--get-regexp', '^(user\\.email|remote\\..*\\.(url|pushurl)|url\\..*\\.(insteadof|pushinsteadof))$']),
  git(['rev-parse', '--show-toplevel', '--absolute-git-dir']),
]).then(([settings, where]) => {
  const file = readFileSync(`${where.split('\n')[0]}/.lockstep.json`, 'utf8');
  process.stdout.write(`${createHash('sha256').update(file).digest('hex')} ${settings.length}\n`);
});
