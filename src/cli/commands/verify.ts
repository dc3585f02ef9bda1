import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  type ContainerFile,
  containerFileAt,
  fetchBranch,
  type GitCommand,
  LockBackendError,
  LockConfigurationError,
  openClone,
  readPageHistory,
  refuseTrackedWitness,
  type Verdict,
  verdictMarkdown,
  verdictText,
  verifyMerge,
  verifyPush,
} from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command, CommandContext } from '../command';

const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const ZERO = /^0+$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const BRANCH = /^(?!.*(?:\.\.|\/\/|\/\.|\.lock\/|\.lock$|[/.]$))[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/;

export const verifyCommand: Command = {
  name: 'verify',
  summary: "a forge's required check: were landings made under the live grant? (--push OLD..NEW | --merge BASE HEAD --actor LOGIN)",
  help: `usage: lockstep verify --push OLD..NEW [--branch B] [--remote R]
       lockstep verify --merge BASE HEAD --actor LOGIN [--remote R]

For a forge where no server hook runs (GitHub, GitLab.com): run as a required check in a clean
clone of the repository (full history). Decides from the lock page's history and the protected
branch alone. The container's settings are read from the protected branch as committed before
the change under check (OLD, or BASE's tip), never from the work tree.

  --push OLD..NEW   a push event: every first-parent commit from OLD to NEW must have been
                    announced by the holder of the live grant before it landed (release --push,
                    the pre-push hook and VS Code's Push and Release announce it). OLD all zeros:
                    a new branch (judged by the commits no other branch of R has); NEW all zeros
                    (a deletion) or NEW not descending from OLD (a rewrite) fails.
  --branch B        the branch pushed (default: the first protected branch)
  --merge BASE HEAD a pull or merge request into BASE with head commit HEAD: the request's author
  --actor LOGIN     (LOGIN, mapped by pushers in .lockstep.json) must hold the live grant now,
                    and HEAD must be based on BASE's current tip.
  --remote R        the remote the clone was made from (default origin)
  --witness FILE    a signed page: keep the last page this check proved in FILE between runs
                    (a CI cache); a page later set back past it fails as tampered. Without it
                    each run proves the page afresh and cannot see a step dropped before it ran.
                    A FILE the checkout tracks is refused (it would be the change's own).

Prints a short summary; with --json one object. When GITHUB_STEP_SUMMARY is set, the Markdown
summary is appended to that file (the check's page). Credentials for a file, SQL or Redis page
come from the environment (LOCKSTEP_DATABASE_URL, LOCKSTEP_REDIS_URL, …: the CI's secrets).
Identities on the page are declared by its writers, not proven, until signed history is on
(allowedSigners in .lockstep.json; on every driver).

Exit codes: 0 passed · 1 failed (a landing not made under the live grant) · 2 usage ·
4 backend unavailable · 5 damaged record or no lock page.`,

  async run(context) {
    const { values, positionals } = parseCommandArgs(
      context.args,
      {
        push: { type: 'string' },
        merge: { type: 'string' },
        actor: { type: 'string' },
        branch: { type: 'string' },
        remote: { type: 'string' },
        witness: { type: 'string' },
      },
      true,
    );
    const remote = values.remote ?? 'origin';
    if (!NAME.test(remote)) throw usage('--remote must be the name of a remote, such as origin.', 'remote');
    if ((values.push === undefined) === (values.merge === undefined))
      throw usage('Give exactly one of --push OLD..NEW or --merge BASE HEAD --actor LOGIN.', 'arguments');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a path with a control character is refused, so this matches them
    if (values.witness !== undefined && (values.witness === '' || /[\u0000-\u001f]/.test(values.witness)))
      throw usage('--witness takes a file path.', 'witness');
    const witness = values.witness === undefined ? undefined : path.resolve(context.cwd, values.witness);
    const clone = await openClone(context.cwd);
    if (witness !== undefined) await refuseTrackedWitness(clone.git, clone.root, witness);
    const verdict =
      values.push !== undefined
        ? await runPush(context, clone.git, clone.root, values.push, values.branch, remote, positionals, witness)
        : await runMerge(context, clone.git, clone.root, values.merge!, positionals, values.actor, remote, witness);
    const summaryFile = context.env.GITHUB_STEP_SUMMARY;
    if (summaryFile) fs.appendFileSync(summaryFile, verdictMarkdown(verdict));
    const exit = verdict.outcome === 'passed' ? 0 : 1;
    context.out.result(verdictText(verdict), { ...verdict, markdown: verdictMarkdown(verdict) }, exit);
    return exit;
  },
};

function usage(message: string, setting: string): LockConfigurationError {
  return new LockConfigurationError(`${message} See lockstep verify --help.`, { setting });
}

async function runPush(
  context: CommandContext,
  git: GitCommand,
  root: string,
  range: string,
  branchOption: string | undefined,
  remote: string,
  extra: readonly string[],
  witnessFile: string | undefined,
): Promise<Verdict> {
  if (extra.length > 0) throw usage('--push takes one OLD..NEW range and no other words.', 'push');
  const match = /^([0-9a-f]{40}|[0-9a-f]{64})\.\.([0-9a-f]{40}|[0-9a-f]{64})$/.exec(range);
  if (!match) throw usage('--push takes OLD..NEW, two full commit ids (all zeros for a new or deleted branch).', 'push');
  const old = ZERO.test(match[1]) ? null : match[1];
  const next = ZERO.test(match[2]) ? null : match[2];
  if (old === null && next === null) throw usage('--push OLD..NEW: OLD and NEW cannot both be all zeros.', 'push');
  // The settings as committed on the branch before the push (a new branch: the remote's default branch).
  const settingsAt = old ?? `refs/remotes/${remote}/HEAD`;
  const file = await containerFileAt(git, settingsAt);
  const branch = branchOption ?? file.protectedBranches[0];
  if (!BRANCH.test(branch)) throw usage('--branch must be a branch name such as main.', 'branch');
  const verdict = await verifyPush(git, file, { branch, old, new: next, remote }, () =>
    readPageHistory(file, root, context.env, { git, revision: settingsAt, ...(witnessFile !== undefined ? { witnessFile } : {}) }),
  );
  return { ...verdict, identities: file.allowedSigners !== undefined ? 'proven' : 'declared' };
}

async function runMerge(
  context: CommandContext,
  git: GitCommand,
  root: string,
  branch: string,
  positionals: readonly string[],
  actor: string | undefined,
  remote: string,
  witnessFile: string | undefined,
): Promise<Verdict> {
  if (positionals.length !== 1) throw usage("--merge takes BASE (the branch) and HEAD (the request's head commit).", 'merge');
  if (!BRANCH.test(branch)) throw usage('--merge BASE must be a branch name such as main.', 'merge');
  const head = positionals[0];
  if (!COMMIT.test(head)) throw usage('--merge BASE HEAD: HEAD must be a full commit id.', 'merge');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: an actor with a control character is refused, so this matches them
  if (actor === undefined || actor.trim() === '' || actor.length > 200 || /[\u0000-\u001f\u007f]/.test(actor))
    throw usage("--merge needs --actor LOGIN, the request's author.", 'actor');
  const tip = await remoteTip(git, remote, branch);
  const file: ContainerFile = await containerFileAt(git, tip);
  const verdict = await verifyMerge(
    git,
    file,
    { branch, tip, head, actor },
    async () =>
      (await readPageHistory(file, root, context.env, { git, revision: tip, ...(witnessFile !== undefined ? { witnessFile } : {}) }))
        .record,
    Date.now(),
  );
  return { ...verdict, identities: file.allowedSigners !== undefined ? 'proven' : 'declared' };
}

/** BASE's tip as the remote answers now, fetched when the clone does not have it yet. */
async function remoteTip(git: GitCommand, remote: string, branch: string): Promise<string> {
  const unreachable = (cause: unknown) => {
    throw new LockBackendError(
      'git',
      `The remote ${remote} could not be reached to read ${branch}'s tip; run the check again when it is reachable.`,
      { cause },
    );
  };
  const listed = await git.raw(['ls-remote', '--end-of-options', remote, `refs/heads/${branch}`]).catch(unreachable);
  const tip = listed
    .split('\n')
    .map(line => line.split('\t'))
    .find(([, ref]) => ref === `refs/heads/${branch}`)?.[0];
  if (tip === undefined || !COMMIT.test(tip)) throw usage(`The remote has no branch ${branch}.`, 'merge');
  const present = await git.raw(['cat-file', '-e', '--end-of-options', `${tip}^{commit}`]).then(
    () => true,
    () => false,
  );
  if (!present) {
    await fetchBranch(git, remote, branch, `refs/remotes/${remote}/${branch}`).catch(unreachable);
  }
  return tip;
}
