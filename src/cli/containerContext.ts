import { Container } from '../core/application';
import type { CommandContext } from './command';

/** Opens the container of the clone at `--cwd`, runs `work`, and closes the driver whatever happens. */
export async function withContainer<T>(context: CommandContext, work: (container: Container) => Promise<T>): Promise<T> {
  const container = await Container.open({ cwd: context.cwd, env: context.env, onNotice: line => context.out.warn(line) });
  try {
    return await work(container);
  } finally {
    await container.close();
  }
}
