/**
 * Marks a mocha suite as one backend's run of shared behaviours (the driver contract on memory, file, SQL…): the
 * tally reporter (scripts/tally-reporter.cjs) then keys its tests by `group` and the titles below the suite, so
 * the summary's "distinct behaviours" counts each such test once, however many backends ran it.
 */
export function behaviourGroup(suite: Mocha.Suite, group: string): void {
  (suite as Mocha.Suite & { lockstepBehaviourGroup?: string }).lockstepBehaviourGroup = group;
}
