import { fileStore, signedChainAttacks, sqliteStore } from '../helpers/signedChainAttacks';

/**
 * The signed chain of a lock page on stores every participant can write (signedChainAttacks.ts): the
 * file driver (bob writes revision files as the driver frames them) and SQLite (an SQL UPDATE).
 * Redis: test/live/redis/signedChain.test.ts.
 */

signedChainAttacks('file', fileStore);
signedChainAttacks('sqlite', sqliteStore);
