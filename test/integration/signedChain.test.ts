import * as path from 'node:path';
import { namespaceDigest } from '../../src/core/names';
import { fileHand, signedChainAttacks, sqliteHand } from '../helpers/signedChainAttacks';

/**
 * The signed chain of a lock page on stores every participant can write (signedChainAttacks.ts): the
 * file driver (bob writes revision files as the driver frames them) and SQLite (an SQL UPDATE).
 * Redis: test/live/redis/signedChain.test.ts.
 */

signedChainAttacks('file', async () => ({
  teamOptions: { driver: 'file' },
  hand: (team, key) => fileHand(path.join(team.store, namespaceDigest('lockstep'), key.slice(0, 2), `r${key}`)),
}));

signedChainAttacks('sqlite', async () => ({
  teamOptions: { initArgs: ['--driver', 'sql'] },
  hand: (team, key) => sqliteHand(path.join(team.store, 'lockstep.sqlite'), key),
}));
