import { commands } from './commands/index';
import { dispatch, runCommandLine } from './dispatch';

/** The whole command line: every command of `lockstep --help`. */
export function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return dispatch(commands, argv, env);
}

/** Runs the command line on this process's arguments (dist/cli.js calls it for every command but `guard …`). */
export function runCli(): void {
  runCommandLine(commands);
}

if (require.main === module) runCli();
