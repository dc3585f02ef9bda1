import type { Output } from './output';

/** What every command receives: its own arguments (after the command word) and the shared context. */
export interface CommandContext {
  readonly args: readonly string[];
  readonly cwd: string;
  readonly out: Output;
  readonly env: NodeJS.ProcessEnv;
}

export interface Command {
  /** The word(s) after `lockstep`, e.g. `run` or `hooks install`. */
  readonly name: string;
  readonly summary: string;
  /** Full help text for `lockstep NAME --help`. */
  readonly help: string;
  /** Returns the process exit code. Throws typed errors; main turns them into exit codes. */
  run(context: CommandContext): Promise<number>;
}
