/**
 * Every command id in one table. package.json `contributes.commands` lists exactly these (the
 * extension tests check both directions).
 */
export const CommandIds = {
  initialise: 'lockstep.initialise',
  acquire: 'lockstep.acquire',
  release: 'lockstep.release',
  pushAndRelease: 'lockstep.pushAndRelease',
  petition: 'lockstep.petition',
  withdraw: 'lockstep.withdraw',
  leaseIds: 'lockstep.leaseIds',
  insertNextId: 'lockstep.insertNextId',
  assignBlock: 'lockstep.assignBlock',
  markBlockDone: 'lockstep.markBlockDone',
  clear: 'lockstep.clear',
  showLockPage: 'lockstep.showLockPage',
  installHooks: 'lockstep.installHooks',
  showLog: 'lockstep.showLog',
  refresh: 'lockstep.refresh',
  holderMenu: 'lockstep.holderMenu',
  diagnose: 'lockstep.diagnose',
} as const;

export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];
