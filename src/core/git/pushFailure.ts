import { escapeControls } from '../safeText';
import { failure, GitError, redact } from './gitError';

/** Why a push of the protected branch did not land, in classes that each have one next step. */
export type PushFailureKind =
  /** The remote's branch has commits this clone lacks (non-fast-forward, fetch first). */
  | 'behind'
  /** A guard refused it: the client's pre-push hook, or the server's pre-receive (Lockstep's or the forge's own rule). */
  | 'refused-by-guard'
  | 'credentials'
  | 'unreachable'
  | 'other';

export interface PushFailure {
  readonly kind: PushFailureKind;
  /** What happened and what to do, for the person who pushed: git's reason, never a URL's credentials. */
  readonly message: string;
}

/** A quoted line of the remote's or the guard's own words: controls escaped, credentials and object names redacted, bounded. */
function quote(line: string): string {
  const text = escapeControls(redact(line.trim()));
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * Reads a failed `git push --porcelain` (its stdout's ref status lines, its stderr: the hooks' and the
 * server's `remote:` lines) as git means it. Pure. The server's refusal wins over the client hook's
 * success note ("grant #22 verified"), which is printed before the server answers; a `remote:` line
 * of Lockstep's server guard is quoted as it is, a forge's own `remote:` lines (branch protection)
 * likewise.
 */
export function explainPushFailure(
  output: { readonly stdout: string; readonly stderr: string },
  where: { readonly remote: string; readonly branch: string },
): PushFailure {
  const refLines = output.stdout.split('\n').filter(l => /^[!]\t/.test(l));
  // The porcelain status lines; without them (a push run by another program, such as VS Code's git), git's
  // human lines on stderr (" ! [remote rejected] main -> main (pre-receive hook declined)") say the same.
  const human = output.stderr
    .split('\n')
    .filter(l => /^\s*!\s+\[/.test(l))
    .map(l => l.replace(/^\s*!\s+/, '').replace(/\s+\S+ -> \S+\s+/, ' '));
  const summary = [...refLines.map(l => l.split('\t')[2] ?? ''), ...human].join(' ');
  const stderr = output.stderr
    .split('\n')
    .map(l => l.trimEnd())
    .filter(l => l !== '');
  const remoteLines = stderr
    .filter(l => /^remote:/.test(l))
    .map(l => l.replace(/^remote:\s?/, ''))
    .filter(l => l.trim() !== '');
  const ours = (lines: readonly string[]) =>
    lines.filter(l => /^lockstep:/.test(l.trim()) && !/^lockstep:\s*(warning:|grant #\d+ verified)/.test(l.trim()));

  if (/\[rejected\]/.test(summary) && /non-fast-forward|fetch first|stale info/.test(summary)) {
    return {
      kind: 'behind',
      message: `${where.remote}/${where.branch} has commits this clone does not have: pull them (git pull --rebase), then push and release again.`,
    };
  }
  if (/\[remote rejected\]/.test(summary)) {
    const guard = ours(remoteLines).at(-1);
    const said =
      guard !== undefined
        ? guard.trim().replace(/^lockstep:\s*/, '')
        : remoteLines
            .filter(l => !/^\s*(To |Total |Counting |Compressing |Writing |Resolving )/.test(l))
            .slice(-3)
            .join(' ');
    const why = summary.match(/\[remote rejected\]\s*\(([^)]*)\)/)?.[1];
    return {
      kind: 'refused-by-guard',
      message: `the server refused it${why ? ` (${quote(why)})` : ''}${said ? `: ${quote(said).replace(/\.$/, '')}` : ''}.${guard !== undefined ? '' : ' Ask whoever administers the remote what its rule requires.'}`,
    };
  }
  // The client's pre-push hook said no: git sends nothing and prints the hook's words without "remote:".
  const hook = ours(stderr.filter(l => !/^remote:/.test(l))).at(-1);
  if (hook !== undefined && /failed to push|hook declined/i.test(output.stderr)) {
    return { kind: 'refused-by-guard', message: `the pre-push guard refused it: ${quote(hook.replace(/^\s*lockstep:\s*/, ''))}` };
  }
  // Credentials and reachability as every git failure is typed (gitError.ts), in a push's words.
  const typed = failure({ code: 1, stderr: output.stderr }, 'push');
  const gitKind = typed instanceof GitError ? typed.kind : undefined;
  if (gitKind === 'credentials') {
    return {
      kind: 'credentials',
      message: `${where.remote} did not accept your credentials (or none were available without a prompt): set up your git credentials for it (credential helper or SSH key), then push and release again.`,
    };
  }
  if (gitKind === 'unreachable') {
    return {
      kind: 'unreachable',
      message: `${where.remote} could not be reached (network, or the remote's address): try again when it is.`,
    };
  }
  const last = stderr.filter(l => !/^(To |hint:|remote:\s*$)/.test(l)).at(-1);
  return {
    kind: 'other',
    message: last !== undefined ? `git said: ${quote(last)}` : 'git gave no reason; run git push yourself to see it.',
  };
}
