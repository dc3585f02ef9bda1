import type { Client } from 'pg';
import type { Disposable } from '../store';
import type { ChangeFeed } from './changeFeed';

/** Only channels made by `recordChannel`; anything else never reaches a statement. */
const CHANNEL = /^[a-z0-9_]{1,63}$/;

/**
 * PostgreSQL's `LISTEN` on one dedicated connection (a pooled one would be handed to other work).
 * Opened by the first `ready()` after a subscription, never by a subscription alone; closed when the
 * last subscription goes, so that a disposed watch leaves no socket keeping the process alive. A lost
 * connection (server restart, `pg_terminate_backend`, network) is only noted: the next `ready()` —
 * the watch's backup poll — connects again, then reads, so that what was sent while it was down is
 * read rather than lost.
 */
export class PgChangeFeed implements ChangeFeed {
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  /** Channels LISTENed on the current connection. */
  private readonly listening = new Set<string>();
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private closed = false;

  constructor(private readonly connect: () => Promise<Client>) {}

  subscribe(channel: string, onNotify: (payload: string) => void): Disposable {
    if (!CHANNEL.test(channel)) throw new Error('A change channel is a lowercase identifier (recordChannel).');
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    // Wrapped so that one function subscribed twice is two subscriptions, each disposed on its own.
    const handler = (payload: string) => onNotify(payload);
    set.add(handler);
    const owned = set;
    return {
      dispose: () => {
        owned.delete(handler);
        if (owned.size > 0 || this.handlers.get(channel) !== owned) return;
        this.handlers.delete(channel);
        if (this.handlers.size === 0) {
          this.drop();
          return;
        }
        if (this.client && this.listening.delete(channel)) this.client.query(`UNLISTEN "${channel}"`).catch(() => undefined);
      },
    };
  }

  async ready(): Promise<void> {
    if (this.closed || this.handlers.size === 0) return;
    const client = await this.open();
    for (const channel of [...this.handlers.keys()]) {
      if (this.listening.has(channel)) continue;
      await client.query(`LISTEN "${channel}"`);
      if (this.client === client) this.listening.add(channel);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.drop();
  }

  private open(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      try {
        const client = await this.connect();
        const lost = () => {
          if (this.client === client) this.drop();
        };
        client.on('error', lost);
        client.on('end', lost);
        client.on('notification', message => this.dispatch(message.channel, message.payload ?? ''));
        if (this.closed || this.handlers.size === 0) {
          await client.end().catch(() => undefined);
          throw new Error('The change feed closed while it connected.');
        }
        this.client = client;
        return client;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  /** Forgets the connection (lost, or no longer needed) and ends it. */
  private drop(): void {
    const client = this.client;
    this.client = undefined;
    this.listening.clear();
    client?.end().catch(() => undefined);
  }

  private dispatch(channel: string, payload: string): void {
    for (const handler of [...(this.handlers.get(channel) ?? [])]) {
      try {
        handler(payload);
      } catch {
        // A handler's failure is its own; it never reaches pg's event emitter.
      }
    }
  }
}
