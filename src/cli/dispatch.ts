import * as path from 'node:path';
import { LockConfigurationError } from '../core/application';
import type { Command } from './command';
import { Output } from './output';
import { version } from '../../package.json';

/** The package's version: only this field of package.json is bundled (a named import of JSON). */
const VERSION: string = version;

const USAGE = `usage: lockstep [--cwd DIR] [--json] COMMAND [ARGS…]

Lock-aware collaboration on a git repository: one lead at a time, fenced at landing.

Commands:
${'{commands}'}

Global options:
  --cwd DIR   work in DIR instead of the current folder
  --json      print exactly one JSON object on stdout (errors included)
  --help      this text; \`lockstep COMMAND --help\` for one command
  --version   the version (with --json: {"version"})

Exit codes: 0 done · 1 refused · 2 usage or configuration error · 3 busy ·
4 backend unavailable · 5 damaged record, or not the container's lock page (the store holds
none, or LOCKSTEP_* points at another one than .lockstep.json)`;

function usage(commands: readonly Command[]): string {
  const width = Math.max(...commands.map(c => c.name.length));
  return USAGE.replace('{commands}', commands.map(c => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n'));
}

/** Longest match first, so that `hooks install` wins over a hypothetical `hooks`. */
function findCommand(commands: readonly Command[], words: readonly string[]): { command: Command; consumed: number } | undefined {
  let best: { command: Command; consumed: number } | undefined;
  for (const command of commands) {
    const parts = command.name.split(' ');
    if (parts.every((part, i) => words[i] === part) && (!best || parts.length > best.consumed)) {
      best = { command, consumed: parts.length };
    }
  }
  return best;
}

/** The words a user typed as a command: the family's two (`hooks instal`), else one. */
function typedCommand(commands: readonly Command[], words: readonly string[]): string {
  const isFamily = commands.some(c => c.name.startsWith(`${words[0]} `));
  const typed = isFamily && words[1] !== undefined && !words[1].startsWith('-') ? `${words[0]} ${words[1]}` : words[0];
  return typed.slice(0, 40);
}

function unknownCommand(commands: readonly Command[], words: readonly string[]): LockConfigurationError {
  const typed = typedCommand(commands, words);
  const near = closestCommand(commands, typed);
  return new LockConfigurationError(
    `Unknown command: ${typed}.${near ? ` Did you mean \`lockstep ${near}\`?` : ''} Run lockstep --help for the list.`,
    { setting: 'command' },
  );
}

/** The nearest command within one edit per three letters typed (two at most), if any. */
function closestCommand(commands: readonly Command[], typed: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const { name } of commands) {
    const distance = editDistance(typed, name);
    if (distance <= Math.min(2, Math.max(1, Math.floor(typed.length / 3))) && (!best || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps). A dozen
 * lines for a CLI hint did not earn a dependency in the bundle that every git hook loads.
 */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** `help CMD…`: the same page as `CMD --help` (a family's first word: every command under it). */
function dispatchHelp(commands: readonly Command[], words: readonly string[], out: Output): number {
  const found = findCommand(commands, words);
  const family = commands.filter(c => c.name.startsWith(`${words[0]} `));
  const help =
    found?.consumed === words.length
      ? found.command.help
      : words.length === 1 && family.length > 0
        ? family.map(c => c.help).join('\n\n')
        : undefined;
  if (help === undefined) return out.error(unknownCommand(commands, words));
  out.result(help, { usage: help });
  return 0;
}

/** Runs one command line against `commands` (the whole CLI, or only the guards); resolves with the exit code. */
export async function dispatch(
  commands: readonly Command[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let json = false;
  let cwd = process.cwd();
  let i = 0;
  // Global options come before the command word.
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') json = true;
    else if (arg === '--cwd') {
      cwd = path.resolve(argv[++i] ?? '');
    } else if (arg.startsWith('--cwd=')) cwd = path.resolve(arg.slice('--cwd='.length));
    else break;
  }
  const rest = argv.slice(i);
  const out = new Output(json || (rest.includes('--json') && !rest.slice(0, rest.indexOf('--json')).includes('--')));
  if (rest.length === 0) {
    // No command is a usage error, with or without --json.
    if (!json) {
      process.stderr.write(`${usage(commands)}\n`);
      return 2;
    }
    return out.error(new LockConfigurationError('No command given. Run lockstep --help for the list.', { setting: 'command' }));
  }
  // `help CMD` is `CMD --help`.
  if (rest[0] === 'help' && rest.length > 1) return dispatchHelp(commands, rest.slice(1), out);
  if (rest[0] === '--help' || rest[0] === '-h' || rest[0] === 'help') {
    out.result(usage(commands), { usage: usage(commands) });
    return 0;
  }
  if (rest[0] === '--version' || rest[0] === '-V' || rest[0] === 'version') {
    out.result(`lockstep ${VERSION}`, { version: VERSION });
    return 0;
  }
  const found = findCommand(commands, rest);
  // A command family's first word alone (`hooks`, `guard`), or with --help: the help of every command under it.
  const family = commands.filter(c => c.name.startsWith(`${rest[0]} `));
  if (
    family.length > 0 &&
    (!found || found.command.name.split(' ').length === 1) &&
    (rest.length === 1 || rest[1] === '--help' || rest[1] === '-h')
  ) {
    const help = family.map(c => c.help).join('\n\n');
    if (rest.length === 1 && !json) {
      process.stderr.write(`${help}\n`);
      return 2;
    }
    out.result(help, { usage: help });
    return 0;
  }
  if (!found) return out.error(unknownCommand(commands, rest));
  // `--json` may also follow the command word (before any `--`).
  const ownArgs = rest.slice(found.consumed);
  const terminator = ownArgs.indexOf('--');
  const head = terminator < 0 ? ownArgs : ownArgs.slice(0, terminator);
  if (head.includes('--help') || head.includes('-h')) {
    out.result(found.command.help, { usage: found.command.help });
    return 0;
  }
  const args = [...head.filter(a => a !== '--json'), ...(terminator < 0 ? [] : ownArgs.slice(terminator))];
  try {
    return await found.command.run({ args, cwd, out, env });
  } catch (error) {
    return out.error(error);
  }
}

/**
 * A reader that goes away (`lockstep status | head -1`) closes the pipe under stdout or stderr, and the
 * next write fails with EPIPE. That is no failure of the command: what it would still print is dropped,
 * quietly — never an unhandled 'error' event with its stack trace — and the process ends with the
 * command's own exit code (0 for a status that was read). So `lockstep status | head -1` exits 0, and a
 * guard that refuses still exits non-zero: a closed pipe never turns a refusal into an accepted push.
 */
export function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
}

/** Runs `commands` on this process's arguments and sets the exit code (dist/cli.js calls it once dist/code-cache.js has loaded the bundle). */
export function runCommandLine(commands: readonly Command[]): void {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
  dispatch(commands, process.argv.slice(2)).then(
    code => {
      process.exitCode = code;
    },
    error => {
      process.stderr.write(`lockstep: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
