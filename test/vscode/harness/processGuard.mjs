// Runs one command in a process group of its own and ends that whole group when whoever started this guard goes
// away: its stdin pipe closes (normal exit, a crash, even SIGKILL of the runner), or SIGINT/SIGTERM/SIGHUP arrive.
// code-server forks an extension host, a pty host and file watchers; killing only its pid would leave them behind.
// usage: node processGuard.mjs LOGFILE -- COMMAND [ARG…]      (the command's stdout and stderr go to LOGFILE)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

const [logFile, separator, command, ...args] = process.argv.slice(2);
if (!logFile || separator !== '--' || !command) {
  console.error('usage: node processGuard.mjs LOGFILE -- COMMAND [ARG…]');
  process.exit(2);
}
const out = fs.openSync(logFile, 'a');
const child = spawn(command, args, { stdio: ['ignore', out, out], detached: true });
const groupAlive = () => {
  try {
    process.kill(-child.pid, 0);
    return true;
  } catch {
    return false;
  }
};
const signalGroup = signal => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
};

let stopping = false;
async function stopGroup(exitCode) {
  if (stopping) return;
  stopping = true;
  signalGroup('SIGTERM');
  // Give the group 5 s to shut down cleanly (code-server saves state), then kill what is left.
  const deadline = Date.now() + 5000;
  while (groupAlive() && Date.now() < deadline) await delay(100);
  if (groupAlive()) signalGroup('SIGKILL');
  process.exit(exitCode);
}

child.on('error', err => {
  fs.writeSync(out, `processGuard: cannot start ${command}: ${err.message}\n`);
  process.exit(127);
});
// The command ended by itself: still sweep up whatever it forked.
child.on('exit', (code, signal) => stopGroup(code ?? (signal ? 128 : 1)));
process.stdin.on('end', () => stopGroup(0));
process.stdin.on('error', () => stopGroup(0));
process.stdin.resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stopGroup(1));
