/**
 * Marks a mocha suite as one backend's (or one host's) run of shared behaviours (the driver contract on memory, file,
 * SQL…; the VS Code driver tests on each driver and host): the tally (scripts/test-counts.cjs) then keys its tests by
 * `group` and the titles below the suite, so the summary's "distinct behaviours" counts each such test once, however
 * many backends or hosts ran it. The titles below the suite must not name the backend or host.
 */
export function behaviourGroup(suite: Mocha.Suite, group: string): void {
  (suite as Mocha.Suite & { lockstepBehaviourGroup?: string }).lockstepBehaviourGroup = group;
}
