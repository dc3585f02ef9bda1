import type { Disposable } from '../store';
import type { RedisClient } from './clients';

/**
 * Record change notifications over Redis pub/sub. A subscribed connection can do nothing else, so
 * this owns a second client (clients.ts `createSubscriber`), created only when the first watch starts.
 * On a Cluster, PUBLISH reaches every node, so the one subscriber hears every record's channel.
 *
 * Delivery is "at least once after the record may have changed": each listener is also called once
 * its subscription is in place (changes before that could not be seen) and after every reconnection
 * (messages published while disconnected are lost). Listeners then re-read the record.
 */
export class RecordWatcher {
  private readonly listeners = new Map<string, Set<() => void>>();
  private connectedBefore = false;

  /** `subscriber` waits for its connection and subscribes again after a reconnection; this closes it. */
  constructor(private readonly subscriber: RedisClient) {
    this.subscriber.on('message', (channel: string) => this.notify(channel));
    this.subscriber.on('ready', () => {
      if (this.connectedBefore) for (const channel of this.listeners.keys()) this.notify(channel);
      this.connectedBefore = true;
    });
  }

  watch(channel: string, onChange: () => void): Disposable {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    // Wrapped so that one function watched twice is two listeners, each disposed on its own.
    let active = true;
    const listener = (): void => {
      if (active) callSafely(onChange);
    };
    set.add(listener);
    // SUBSCRIBE is idempotent per connection; its reply means messages from now on will arrive.
    this.subscriber.subscribe(channel).then(listener, () => undefined);
    return {
      dispose: () => {
        if (!active) return;
        active = false;
        set.delete(listener);
        if (set.size === 0 && this.listeners.get(channel) === set) {
          this.listeners.delete(channel);
          this.subscriber.unsubscribe(channel).catch(() => undefined);
        }
      },
    };
  }

  close(): void {
    this.listeners.clear();
    this.subscriber.disconnect();
  }

  private notify(channel: string): void {
    for (const listener of this.listeners.get(channel) ?? []) listener();
  }
}

/** A listener's failure is its own; it never breaks delivery to others or throws into ioredis. */
function callSafely(fn: () => void): void {
  try {
    fn();
  } catch {
    // Intentionally ignored: watchers must handle their own errors.
  }
}
