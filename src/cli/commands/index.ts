import type { Command } from '../command';
import { runCommand } from './run';

/** Every command of the public command line, in the order `lockstep --help` lists them. */
export const commands: readonly Command[] = [
  runCommand,
];
