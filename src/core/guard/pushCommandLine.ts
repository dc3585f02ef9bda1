import { gitBoolean } from '../gitBoolean';

/**
 * A `git push` command line read as git reads it, for what the proof-leak check needs: whether the
 * push is signed, whether it recurses into submodules, and which push options it gives. git's
 * option parser (parse-options) takes any unique prefix of a long option (`--sign` is `--signed`),
 * `--no-` forms, `=value` and, for options that need one, the next argument as the value; short
 * options cluster (`-fo VALUE`); options and other arguments mix until `--` or `--end-of-options`.
 * git's own options before the command (`-c`, `-C DIR`, …) are skipped, and an alias is expanded
 * from its configured text as git splits it. Pure: argv in, what git will do out.
 *
 * The hook only runs when git accepted the command line, so an abbreviation git would call
 * ambiguous never reaches here; one that is ambiguous only in this table (another git version)
 * is reported as doubtful when it could name an option that matters, and the check then refuses.
 */

type Arg = 'none' | 'required' | 'optional';

interface LongOption {
  readonly name: string;
  readonly arg: Arg;
  /** For `--branches` (newer gits): another name of `--all`, never ambiguous with it. */
  readonly aliasOf?: string;
}

/** builtin/push.c's options (git 2.39, plus the later `--branches`), in git's order. */
const PUSH_OPTIONS: readonly LongOption[] = [
  { name: 'verbose', arg: 'none' },
  { name: 'quiet', arg: 'none' },
  { name: 'repo', arg: 'required' },
  { name: 'all', arg: 'none' },
  { name: 'branches', arg: 'none', aliasOf: 'all' },
  { name: 'mirror', arg: 'none' },
  { name: 'delete', arg: 'none' },
  { name: 'tags', arg: 'none' },
  { name: 'dry-run', arg: 'none' },
  { name: 'porcelain', arg: 'none' },
  { name: 'force', arg: 'none' },
  { name: 'force-with-lease', arg: 'optional' },
  { name: 'force-if-includes', arg: 'none' },
  { name: 'recurse-submodules', arg: 'required' },
  { name: 'thin', arg: 'none' },
  { name: 'receive-pack', arg: 'required' },
  { name: 'exec', arg: 'required' },
  { name: 'set-upstream', arg: 'none' },
  { name: 'progress', arg: 'none' },
  { name: 'prune', arg: 'none' },
  { name: 'no-verify', arg: 'none' },
  { name: 'follow-tags', arg: 'none' },
  { name: 'signed', arg: 'optional' },
  { name: 'atomic', arg: 'none' },
  { name: 'push-option', arg: 'required' },
  { name: 'ipv4', arg: 'none' },
  { name: 'ipv6', arg: 'none' },
];

/** Short options of `git push`; only -o takes a value. */
const SHORT: Readonly<Record<string, { long: string; arg: Arg }>> = {
  v: { long: 'verbose', arg: 'none' },
  q: { long: 'quiet', arg: 'none' },
  d: { long: 'delete', arg: 'none' },
  n: { long: 'dry-run', arg: 'none' },
  f: { long: 'force', arg: 'none' },
  u: { long: 'set-upstream', arg: 'none' },
  o: { long: 'push-option', arg: 'required' },
  4: { long: 'ipv4', arg: 'none' },
  6: { long: 'ipv6', arg: 'none' },
};

/** The options whose reading decides a leak. */
const MATTERS = new Set(['signed', 'recurse-submodules', 'push-option']);

export type SignMode = 'always' | 'never' | 'if-asked' | 'invalid';
export type RecurseMode = 'on-demand' | 'only' | 'check' | 'off' | 'invalid';

export interface PushCommandLine {
  /** `--signed[=…]` / `--no-signed` as given last; undefined when absent (the configuration decides). */
  readonly signed?: SignMode;
  /** `--recurse-submodules=…` / `--no-recurse-submodules` as given last; undefined when absent. */
  readonly recurseSubmodules?: RecurseMode;
  /** `-o` / `--push-option` values after any `--no-push-option`; when non-empty they replace the configured ones. */
  readonly pushOptions: readonly string[];
  /** Options this table could not read with certainty that may be one of those above. */
  readonly doubtful: readonly string[];
}

/** `--signed`'s value (`option_parse_push_signed`): a boolean, or if-asked in any case. */
export function signMode(value: string | null): SignMode {
  const bool = gitBoolean(value);
  if (bool !== undefined) return bool ? 'always' : 'never';
  return value !== null && value.toLowerCase() === 'if-asked' ? 'if-asked' : 'invalid';
}

/** `--recurse-submodules` / `push.recurseSubmodules` (`parse_push_recurse`): false, or one of three words; true is refused by git. */
export function recurseMode(value: string | null): RecurseMode {
  const bool = gitBoolean(value);
  if (bool !== undefined) return bool ? 'invalid' : 'off';
  return value === 'on-demand' || value === 'only' || value === 'check' ? value : 'invalid';
}

type LongMatch = { option: LongOption; unset: boolean; value: string | undefined } | { ambiguous: readonly LongOption[] } | undefined;

/** parse-options' `parse_long_opt`: an exact name first, else the one abbreviation; `arg` is without its leading `--`. */
function matchLong(arg: string): LongMatch {
  const eq = arg.indexOf('=');
  const typed = eq < 0 ? arg : arg.slice(0, eq);
  const attached = eq < 0 ? undefined : arg.slice(eq + 1);
  let abbrev: { option: LongOption; unset: boolean } | undefined;
  const ambiguous: LongOption[] = [];
  for (const option of PUSH_OPTIONS) {
    let longName = option.name;
    let optionUnset = false;
    for (;;) {
      let negated = false;
      let rest: string | undefined;
      if (arg.startsWith(longName)) rest = arg.slice(longName.length);
      else if (longName.startsWith(typed)) {
        // abbreviated
      } else if ('no-'.startsWith(arg)) {
        negated = true; // "--no" and shorter: every option's negation, abbreviated very much
      } else if (!arg.startsWith('no-')) {
        if (longName.startsWith('no-')) {
          longName = longName.slice(3);
          optionUnset = true;
          continue; // `--verify` is the negation of `--no-verify`
        }
        break;
      } else {
        negated = true;
        if (arg.slice(3).startsWith(longName)) rest = arg.slice(3 + longName.length);
        else if (!longName.startsWith(arg.slice(3))) break;
      }
      if (rest !== undefined) {
        if (rest !== '' && !rest.startsWith('=')) break;
        return { option, unset: negated !== optionUnset, value: rest === '' ? undefined : rest.slice(1) };
      }
      if (abbrev && abbrev.option.aliasOf !== option.name && option.aliasOf !== abbrev.option.name) ambiguous.push(abbrev.option, option);
      abbrev = { option, unset: negated !== optionUnset };
      break;
    }
  }
  if (ambiguous.length > 0) return { ambiguous };
  return abbrev && { ...abbrev, value: abbrev.unset ? undefined : attached };
}

/** Reads the arguments that follow `push`. */
export function parsePushArguments(args: readonly string[]): PushCommandLine {
  let signed: SignMode | undefined;
  let recurse: RecurseMode | undefined;
  let options: string[] = [];
  const doubtful: string[] = [];
  const apply = (name: string, unset: boolean, value: string | null) => {
    if (name === 'signed') signed = unset ? 'never' : signMode(value);
    else if (name === 'recurse-submodules') recurse = unset ? 'off' : recurseMode(value);
    else if (name === 'push-option') options = unset ? [] : [...options, value ?? ''];
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--' || arg === '--end-of-options') break;
    if (arg.startsWith('--')) {
      const match = matchLong(arg.slice(2));
      if (match === undefined) continue; // unknown to this table: git knows it (it ran the hook), and it is none of those that matter
      if ('ambiguous' in match) {
        if (match.ambiguous.some(o => MATTERS.has(o.name))) doubtful.push(arg.split('=')[0]);
        continue;
      }
      const { option, unset } = match;
      let value: string | null = match.value ?? null;
      if (!unset && match.value === undefined && option.arg === 'required') value = args[++i] ?? null;
      apply(option.name, unset, value);
    } else if (arg.startsWith('-') && arg.length > 1) {
      for (let at = 1; at < arg.length; at++) {
        const short = SHORT[arg[at]];
        if (short === undefined) break;
        if (short.arg === 'required') {
          apply(short.long, false, at + 1 < arg.length ? arg.slice(at + 1) : (args[++i] ?? null));
          break;
        }
      }
    }
  }
  return { signed, recurseSubmodules: recurse, pushOptions: options, doubtful };
}

/** git's own options (git.c) that take the next argument as their value. */
const GIT_OPTIONS_WITH_VALUE = new Set([
  '-c',
  '-C',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
  '--shallow-file',
  '--attr-source',
]);
const MAX_ALIAS_DEPTH = 16;

/**
 * The arguments of the push in a git process's argv (`git [git options] push ARGS…`, a `git-push`
 * program, or an alias whose text starts with push, looked up in `aliases` by lower-case name).
 * Undefined when the command is not recognisably a push.
 */
export function pushArgumentsOf(argv: readonly string[], aliases: ReadonlyMap<string, string>): string[] | undefined {
  if (argv.length === 0) return undefined;
  const program = argv[0].split('/').pop() ?? '';
  if (program === 'git-push') return argv.slice(1);
  let words = argv.slice(1);
  for (let depth = 0; depth <= MAX_ALIAS_DEPTH; depth++) {
    const at = commandIndex(words);
    if (at === undefined) return undefined;
    const command = words[at];
    if (command === 'push') return words.slice(at + 1);
    const text = aliases.get(command.toLowerCase());
    if (text === undefined || text.startsWith('!')) return undefined;
    const expansion = splitCommandLine(text);
    if (expansion === undefined || expansion.length === 0) return undefined;
    words = [...expansion, ...words.slice(at + 1)];
  }
  return undefined;
}

/** Where the command word is, after git's own options. */
function commandIndex(words: readonly string[]): number | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (!word.startsWith('-')) return i;
    if (GIT_OPTIONS_WITH_VALUE.has(word)) i++;
  }
  return undefined;
}

/** C's isspace: what split_cmdline separates words with. */
const SPACE = /[ \t\n\v\f\r]/;

/** git's `split_cmdline` (alias text → words): white space separates, ' and " quote, \ escapes outside single quotes. */
export function splitCommandLine(text: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    let c = text[i];
    if (quote === '' && SPACE.test(c)) {
      words.push(word);
      word = '';
      while (i + 1 < text.length && SPACE.test(text[i + 1])) i++;
    } else if (quote === '' && (c === "'" || c === '"')) {
      quote = c;
    } else if (c === quote) {
      quote = '';
    } else {
      if (c === '\\' && quote !== "'") {
        if (i + 1 >= text.length) return undefined;
        c = text[++i];
      }
      word += c;
    }
  }
  if (quote !== '') return undefined;
  words.push(word);
  return words;
}
