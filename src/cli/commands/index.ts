import type { Command } from '../command';
import { guardPrePushCommand, guardPreReceiveCommand } from './guard';
import { hooksInstallCommand, hooksStatusCommand } from './hooks';
import { acquireCommand, forgetCommand, heartbeatCommand, releaseCommand, waitCommand } from './holding';
import { blocksCommand, queueCommand, rangesCommand } from './lists';
import { doctorCommand } from './doctor';
import { initCommand } from './init';
import { migrateCommand } from './migrate';
import { adoptCommand, auditCommand, clearCommand, compactCommand } from './operator';
import { petitionCommand, withdrawCommand } from './queue';
import { runCommand } from './run';
import { statusCommand } from './status';
import { verifyCommand } from './verify';
import { forgeInitCommand } from './forge';
import { assignCommand, doneCommand, leaseIdsCommand, nextIdCommand } from './work';

/** Every command of the public command line, in the order `lockstep --help` lists them. */
export const commands: readonly Command[] = [
  initCommand,
  statusCommand,
  acquireCommand,
  heartbeatCommand,
  releaseCommand,
  forgetCommand,
  waitCommand,
  petitionCommand,
  withdrawCommand,
  queueCommand,
  rangesCommand,
  blocksCommand,
  leaseIdsCommand,
  nextIdCommand,
  assignCommand,
  doneCommand,
  clearCommand,
  adoptCommand,
  auditCommand,
  compactCommand,
  migrateCommand,
  doctorCommand,
  hooksInstallCommand,
  hooksStatusCommand,
  verifyCommand,
  forgeInitCommand,
  guardPrePushCommand,
  guardPreReceiveCommand,
  runCommand,
];
