import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LockConfigurationError } from '../core/application';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util parseArgs, with unknown options and missing values turned into usage errors (exit 2). */
export function parseCommandArgs<O extends Options>(args: readonly string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals, strict: true });
  } catch (error) {
    // Node's words name the option, never its value; their last line says how to give a value that starts
    // with a dash (--ttl=-1), which is the fix for an ambiguous one.
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
    throw new LockConfigurationError(`${message}${/[.?!]$/.test(message) ? '' : '.'} See --help.`, { setting: 'arguments', cause: error });
  }
}

export function requireOption(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') {
    throw new LockConfigurationError(`${flag} is required. See --help.`, { setting: flag });
  }
  return value;
}
