import { acquireCommand, heartbeatCommand, releaseCommand } from './commands/holding';
import { statusCommand } from './commands/status';
import { runCommandLine } from './dispatch';

/**
 * `lockstep status | acquire | heartbeat | release`, the holder's everyday commands, as their own
 * bundle (dist/holder-main.js): they load the container and its drivers, not the rest of the
 * command line (doctor, hooks, operator and migration commands).
 */
export function runCli(): void {
  runCommandLine([statusCommand, acquireCommand, heartbeatCommand, releaseCommand]);
}
