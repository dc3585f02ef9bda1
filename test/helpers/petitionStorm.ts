/**
 * One clone that petitions and withdraws on its container's page as fast as it can, until told to stop: the
 * storm of test/integration/containerContention.test.ts's precedence case (what fifty windows petitioning at
 * once do to a holder, issue 30).
 *
 *   node --import tsx test/helpers/petitionStorm.ts --cwd CLONE --stop FILE --ready FILE
 *
 * The driver comes from the LOCKSTEP_* environment. Writes the --ready file once its first write landed (a loaded
 * machine may start it late), runs until the --stop file exists, then prints one JSON line: the writes that landed
 * (petitions and withdrawals) and the errors met, by code.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { Container } from '../../src/core/container/container';
import { LockError } from '../../src/core/errors';

export interface StormResult {
  writes: number;
  errors: string[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { cwd: { type: 'string' }, stop: { type: 'string' }, ready: { type: 'string' } } });
  if (!values.cwd || !values.stop || !values.ready) throw new Error('usage: petitionStorm --cwd CLONE --stop FILE --ready FILE');
  const container = await Container.open({ cwd: values.cwd });
  const result: StormResult = { writes: 0, errors: [] };
  try {
    while (!fs.existsSync(values.stop)) {
      for (const step of [() => container.petition(), () => container.withdraw()]) {
        try {
          await step();
          if (result.writes++ === 0) fs.writeFileSync(values.ready, '');
        } catch (error) {
          result.errors.push(error instanceof LockError ? `${error.code}: ${error.message}` : String(error));
        }
      }
    }
  } finally {
    await container.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch(error => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
