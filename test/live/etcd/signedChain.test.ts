import { packPage, unpackPage } from '../../../src/core/stores/packedPage';
import { Etcd3 } from 'etcd3';
import { openpgpChainAttacks } from '../../helpers/openpgpChainAttacks';
import { type AttackedStore, signedChainAttacks } from '../../helpers/signedChainAttacks';
import { EtcdCluster, requireEtcd } from './etcdCluster';

/**
 * The signed chain of a lock page on etcd (signedChainAttacks.ts), against a real three-member cluster: bob,
 * with the store's credentials, puts the record's key with etcdctl's power (a plain put, moving its
 * revision as the driver's transaction does) to name himself holder, and separately to set the page back
 * past alice's acquire.
 */
const etcdStore = async (context: Mocha.Context): Promise<AttackedStore> => {
  requireEtcd(context);
  const cluster = await EtcdCluster.start();
  const prefix = `lockstep-test-${randomSuffix()}`;
  return {
    dispose: () => cluster.dispose(),
    teamOptions: { initArgs: ['--driver', 'etcd'], env: { LOCKSTEP_ETCD_ENDPOINTS: cluster.endpoints, LOCKSTEP_PREFIX: prefix } },
    hand: (_team, key) => {
      const recordKey = `${prefix}/r${key}`;
      const withClient = async <T>(use: (client: Etcd3) => Promise<T>): Promise<T> => {
        const client = new Etcd3({ hosts: cluster.endpoints.split(',') });
        try {
          return await use(client);
        } finally {
          client.close();
        }
      };
      const write = (text: string) =>
        withClient(async client => {
          await client.put(recordKey).value(text);
        });
      return {
        top: () => withClient(async client => unpackPage(JSON.parse((await client.get(recordKey).string()) as string), 'etcd')),
        async writeTop(value) {
          const before = await withClient(async client => (await client.get(recordKey).string()) as string);
          await write(JSON.stringify(packPage(value, 'etcd')));
          return () => write(before);
        },
      };
    },
  };
};

signedChainAttacks('etcd', etcdStore);
// The same store, its people signing with GPG (openpgpChainAttacks.ts).
openpgpChainAttacks('etcd', etcdStore);

function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}
