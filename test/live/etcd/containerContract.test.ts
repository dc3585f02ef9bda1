import { randomBytes } from 'node:crypto';
import { describeContainerContract } from '../../contract/containerContract';
import { EtcdCluster, requireEtcd } from './etcdCluster';

// The container contract (CLI transitions, both guards with real git) with a three-member etcd cluster as the container's store.
describe('on a live three-member etcd cluster', () => {
  let cluster: EtcdCluster | undefined;
  after(async () => {
    await cluster?.dispose();
  });
  describeContainerContract('etcd', async context => {
    requireEtcd(context);
    cluster = await EtcdCluster.start();
    return {
      driver: 'etcd',
      initArgs: ['--driver', 'etcd'],
      env: {
        LOCKSTEP_DRIVER: 'etcd',
        LOCKSTEP_ETCD_ENDPOINTS: cluster.endpoints,
        LOCKSTEP_PREFIX: `container-${randomBytes(4).toString('hex')}`,
      },
    };
  });
});
