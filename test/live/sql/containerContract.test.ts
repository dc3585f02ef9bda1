import { describeContainerContract } from '../../contract/containerContract';
import { liveDialect, randomPrefix, requireLiveTarget } from './sqlLive';

// The container contract (CLI transitions, both guards with real git) with MariaDB or PostgreSQL as the
// container's store (SQLite runs it in the integration suite).
if (liveDialect !== 'sqlite') {
  describeContainerContract(`sql (${liveDialect ?? 'no target'})`, async context => {
    const { url } = requireLiveTarget(context);
    const env = { LOCKSTEP_DRIVER: 'sql', LOCKSTEP_DATABASE_URL: url, LOCKSTEP_PREFIX: randomPrefix() };
    return { driver: 'sql', initArgs: ['--driver', 'sql'], env, beforeInit: [['migrate']] };
  });
}
