/**
 * The ready-made checks `lockstep forge init github|gitlab` writes (and docs/forges/ ships, byte for
 * byte: a unit test compares them). Each runs `lockstep verify` exactly as the integration test
 * runs it: the same command line, fed by the same environment variables. Nothing from the commit
 * under check is executed: lockstep comes from the registry and reads its settings from the
 * protected branch.
 */

export type Forge = 'github' | 'gitlab';

/** Where `forge init` writes each forge's check, relative to the repository's root. */
export const FORGE_FILES: Readonly<Record<Forge, string>> = {
  github: '.github/workflows/lockstep-verify.yml',
  gitlab: '.gitlab/lockstep-verify.gitlab-ci.yml',
};

/**
 * The command lines of the checks (the `run:` / `script:` lines); tests run exactly these. Each keeps
 * the last page it proved (a signed page's witness) in `$LOCKSTEP_WITNESS`, which the forge's cache
 * restores before the check and saves after it, also when it fails: a store set back past a page an
 * earlier run proved then fails the check (README, "Forges without server hooks").
 */
export const VERIFY_PUSH_LINE =
  'lockstep verify --push "$LOCKSTEP_OLD..$LOCKSTEP_NEW" --branch "$LOCKSTEP_BRANCH" --witness "$LOCKSTEP_WITNESS"';
export const VERIFY_MERGE_LINE =
  'lockstep verify --merge "$LOCKSTEP_BASE" "$LOCKSTEP_HEAD" --actor "$LOCKSTEP_ACTOR" --witness "$LOCKSTEP_WITNESS"';

/**
 * GitHub: the witness lives under the runner's temporary folder, outside the checkout (the commit
 * under check can never hold it); the cache keeps one new entry per run and restores the newest.
 */
const GITHUB_WITNESS_DIR = `\${{ runner.temp }}/lockstep-witness`;
const GITHUB_CACHE_KEY = `lockstep-witness-\${{ github.run_id }}-\${{ github.run_attempt }}`;
/** GitLab caches only paths inside the project folder; verify refuses a witness the checkout tracks. */
const GITLAB_WITNESS_DIR = '.lockstep-witness';

/** The witness's cache steps around each GitHub job's verify step: the newest entry restored before, a new one saved after. */
const GITHUB_RESTORE_WITNESS = `      # The last page the check proved (a signed page's witness): the newest entry restored, a new one saved
      # after every run, failed ones included. README "Forges without server hooks": what it proves, whom it trusts.
      - uses: actions/cache/restore@v4
        with:
          path: ${GITHUB_WITNESS_DIR}
          key: ${GITHUB_CACHE_KEY}
          restore-keys: lockstep-witness-
`;
const GITHUB_SAVE_WITNESS = `      - uses: actions/cache/save@v4
        if: always()
        with:
          path: ${GITHUB_WITNESS_DIR}
          key: ${GITHUB_CACHE_KEY}
`;
/** The witness's cache of each GitLab job. */
const GITLAB_CACHE_WITNESS = `  # The last page the check proved (a signed page's witness), kept between pipelines, also when the check
  # fails. README "Forges without server hooks": what it proves, whom it trusts.
  cache:
    key: lockstep-witness
    paths:
      - ${GITLAB_WITNESS_DIR}/
    when: always
`;

function installLine(version: string): string {
  return `npm install --global --ignore-scripts lockstep@${version}`;
}

export function githubWorkflow(version: string): string {
  return `# Lockstep: a landing on a protected branch passes only when made under the live grant of its author.
# Written by \`lockstep forge init github\`. Make the job that matches how you land a required status
# check in the branch protection rule, with no bypass (README: "Forges without server hooks").
name: lockstep-verify
on:
  push:
    branches: ['**']
  # The workflow of the base branch runs, never the request's: nothing from the request is executed.
  pull_request_target:
    types: [opened, synchronize, reopened]
permissions:
  contents: read
jobs:
  verify-push:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: ${installLine(version)}
${GITHUB_RESTORE_WITNESS}      - name: lockstep verify --push
        env:
          LOCKSTEP_OLD: \${{ github.event.before }}
          LOCKSTEP_NEW: \${{ github.event.after }}
          LOCKSTEP_BRANCH: \${{ github.ref_name }}
          # A file, SQL or Redis page: its credentials from the repository's secrets (unset for the git driver).
          LOCKSTEP_DATABASE_URL: \${{ secrets.LOCKSTEP_DATABASE_URL }}
          LOCKSTEP_REDIS_URL: \${{ secrets.LOCKSTEP_REDIS_URL }}
          LOCKSTEP_WITNESS: ${GITHUB_WITNESS_DIR}/page
        run: ${VERIFY_PUSH_LINE}
${GITHUB_SAVE_WITNESS}  verify-merge:
    if: github.event_name == 'pull_request_target'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
          ref: \${{ github.event.pull_request.head.sha }}
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: ${installLine(version)}
${GITHUB_RESTORE_WITNESS}      - name: lockstep verify --merge
        env:
          LOCKSTEP_BASE: \${{ github.base_ref }}
          LOCKSTEP_HEAD: \${{ github.event.pull_request.head.sha }}
          LOCKSTEP_ACTOR: \${{ github.event.pull_request.user.login }}
          LOCKSTEP_DATABASE_URL: \${{ secrets.LOCKSTEP_DATABASE_URL }}
          LOCKSTEP_REDIS_URL: \${{ secrets.LOCKSTEP_REDIS_URL }}
          LOCKSTEP_WITNESS: ${GITHUB_WITNESS_DIR}/page
        run: ${VERIFY_MERGE_LINE}
${GITHUB_SAVE_WITNESS}`;
}

export function gitlabInclude(version: string): string {
  return `# Lockstep: a landing on a protected branch passes only when made under the live grant of its author.
# Written by \`lockstep forge init gitlab\`. Include it from .gitlab-ci.yml:
#   include:
#     - local: ${FORGE_FILES.gitlab}
# then require the pipeline to succeed before merging, and protect the branch (README: "Forges
# without server hooks"). Credentials of a file, SQL or Redis page: masked CI/CD variables
# LOCKSTEP_DATABASE_URL / LOCKSTEP_REDIS_URL.
lockstep-verify-push:
  image: node:20
  rules:
    - if: $CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH
  variables:
    GIT_DEPTH: "0"
    LOCKSTEP_OLD: $CI_COMMIT_BEFORE_SHA
    LOCKSTEP_NEW: $CI_COMMIT_SHA
    LOCKSTEP_BRANCH: $CI_COMMIT_BRANCH
    LOCKSTEP_WITNESS: $CI_PROJECT_DIR/${GITLAB_WITNESS_DIR}/page
${GITLAB_CACHE_WITNESS}  script:
    - ${installLine(version)}
    - ${VERIFY_PUSH_LINE}
lockstep-verify-merge:
  image: node:20
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  variables:
    GIT_DEPTH: "0"
    LOCKSTEP_BASE: $CI_MERGE_REQUEST_TARGET_BRANCH_NAME
    LOCKSTEP_HEAD: $CI_COMMIT_SHA
    # The user who started the pipeline (GitLab names no request author in its variables).
    LOCKSTEP_ACTOR: $GITLAB_USER_LOGIN
    LOCKSTEP_WITNESS: $CI_PROJECT_DIR/${GITLAB_WITNESS_DIR}/page
${GITLAB_CACHE_WITNESS}  script:
    - ${installLine(version)}
    - ${VERIFY_MERGE_LINE}
`;
}

export function forgeFile(forge: Forge, version: string): string {
  return forge === 'github' ? githubWorkflow(version) : gitlabInclude(version);
}
