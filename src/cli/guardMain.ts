import { guardPrePushCommand, guardPreReceiveCommand } from './commands/guard';
import { runCommandLine } from './dispatch';

/**
 * `lockstep guard …` alone, as its own bundle (dist/guard-main.js): the git hooks run it on every
 * protected push, so it loads only the guards and what they use, not the rest of the command line.
 */
export function runCli(): void {
  runCommandLine([guardPrePushCommand, guardPreReceiveCommand]);
}
