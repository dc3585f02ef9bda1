import { openpgpChainAttacks } from '../helpers/openpgpChainAttacks';
import { fileStore, sqliteStore } from '../helpers/signedChainAttacks';

/**
 * GPG-signed steps of the signed chain on stores every participant can write (openpgpChainAttacks.ts):
 * the file driver (bob writes revision files as the driver frames them) and SQLite (an SQL UPDATE).
 * The SSH-signed chain: signedChain.test.ts; GPG on the git driver: openpgpSignedHistory.test.ts.
 */

openpgpChainAttacks('file', fileStore);
openpgpChainAttacks('sqlite', sqliteStore);
