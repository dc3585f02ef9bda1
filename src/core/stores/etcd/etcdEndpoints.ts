import { LockConfigurationError } from '../../errors';

/** The etcd member used when no endpoints are configured. */
export const DEFAULT_ETCD_ENDPOINTS = 'http://127.0.0.1:2379';

/** What LOCKSTEP_ETCD_ENDPOINTS says: the members' addresses, and the user and password if one is given. */
export interface EtcdEndpoints {
  /** `http(s)://host:port` of each member, without credentials, in the order given. */
  readonly hosts: readonly string[];
  /** etcd's user and password (etcd's own auth); never printed. */
  readonly credentials: { readonly username: string; readonly password: string } | undefined;
}

const ENDPOINT = /^(https?):\/\/(?:([^@/?#:]*)(?::([^@/?#]*))?@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/;

/**
 * Parses a comma-separated list of etcd client URLs (`http://host:2379,https://host:2379`). A user and
 * password may be written into one or more of them (`http://user:password@host:2379`), the same on each;
 * the error messages name the setting, never the text (it may hold the password).
 */
export function parseEtcdEndpoints(text: string, setting = 'LOCKSTEP_ETCD_ENDPOINTS'): EtcdEndpoints {
  const parts = text
    .split(',')
    .map(p => p.trim())
    .filter(p => p !== '');
  if (parts.length === 0) throw bad(setting, 'names no endpoint');
  const hosts: string[] = [];
  let credentials: { username: string; password: string } | undefined;
  const schemes = new Set<string>();
  for (const part of parts) {
    const match = ENDPOINT.exec(part);
    if (!match) throw bad(setting, 'has an entry that is not an http:// or https:// URL of the form scheme://host:port');
    const [, scheme, user, password, host, port] = match;
    const portNumber = port === undefined ? 2379 : Number(port);
    if (portNumber < 1 || portNumber > 65535) throw bad(setting, 'has a port outside 1–65535');
    schemes.add(scheme!);
    hosts.push(`${scheme}://${host!.toLowerCase()}:${portNumber}`);
    if (user !== undefined) {
      const next = { username: decoded(user, setting), password: decoded(password ?? '', setting) };
      if (credentials !== undefined && (credentials.username !== next.username || credentials.password !== next.password))
        throw bad(setting, 'gives different users or passwords for different endpoints; give one (on any or every entry)');
      credentials = next;
    }
  }
  if (schemes.size > 1) throw bad(setting, 'mixes http:// and https:// endpoints; a cluster is reached one way');
  return { hosts, credentials };
}

/**
 * The endpoints as they may be printed and committed (`.lockstep.json` etcdEndpoints): without user or
 * password, sorted, so that the same members in another order are the same page. Text that does not
 * parse is not shown at all: it might hold a password.
 */
export function etcdEndpointsWithoutCredentials(text: string): string {
  try {
    return [...new Set(parseEtcdEndpoints(text).hosts)].sort().join(',');
  } catch {
    return '(unparsable etcd endpoints)';
  }
}

/** A percent-encoded user or password, decoded; a malformed `%` is a typed error that does not repeat the text. */
function decoded(text: string, setting: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw bad(
      setting,
      'has a user or password with a "%" that does not start a percent-encoded byte (write a literal "%" as %25, and other reserved characters percent-encoded)',
    );
  }
}

function bad(setting: string, what: string): LockConfigurationError {
  return new LockConfigurationError(
    `${setting} ${what}. Write the etcd members' client URLs separated by commas, e.g. http://10.0.0.1:2379,http://10.0.0.2:2379.`,
    { setting },
  );
}
