/**
 * Whether the tests run in CI: CI is `true` or `1`, in any case (`.ci/run` exports CI=true). The same rule as
 * `in_ci` in scripts/accounting.sh; in CI a live backend that cannot run fails instead of skipping.
 */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(true|1)$/i.test(env.CI ?? '');
}
