import type { Watch } from '../store';
import { callSafely } from '../callSafely';
import type { RedisClient } from './clients';

/**
 * Record change notifications over Redis pub/sub. A subscribed connection can do nothing else, so
 * this owns a second client (clients.ts `createSubscriber`), created only when the first watch starts.
 * On a Cluster, PUBLISH reaches every node, so the one subscriber hears every record's channel.
 *
 * Delivery is "at least once after the record may have changed": each listener is also called once
 * its subscription is in place (changes before that could not be seen), after every reconnection
 * (messages published while disconnected are lost), when the connection drops and on any error of
 * the subscriber. Listeners then re-read the record. Each watch states its health (`live`): down from
 * a dropped connection until the subscriber is ready again, so that its owner re-reads on its own
 * pace only while events may be lost, and not at all while they cannot be.
 */
export class RecordWatcher {
  private readonly listeners = new Map<string, Set<Listener>>();
  private connectedBefore = false;
  private healthy = true;

  /** `subscriber` waits for its connection and subscribes again after a reconnection; this closes it. */
  constructor(private readonly subscriber: RedisClient) {
    this.subscriber.on('message', (channel: string) => this.notify(channel));
    this.subscriber.on('ready', () => {
      const again = this.connectedBefore || !this.healthy;
      this.connectedBefore = true;
      if (again) this.setHealth(true);
    });
    this.subscriber.on('close', () => this.setHealth(false));
    this.subscriber.on('end', () => this.setHealth(false));
    // An error may mean a lost message: one read, whatever the connection does next.
    this.subscriber.on('error', () => this.notifyAll());
  }

  watch(channel: string, onChange: () => void, onHealth?: (healthy: boolean) => void): Watch {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    // Wrapped so that one function watched twice is two listeners, each disposed on its own.
    let active = true;
    const listener: Listener = {
      change: () => {
        if (active) callSafely(onChange);
      },
      health: healthy => {
        if (active && onHealth) callSafely(() => onHealth(healthy));
      },
    };
    set.add(listener);
    // SUBSCRIBE is idempotent per connection; its reply means messages from now on will arrive.
    this.subscriber.subscribe(channel).then(listener.change, () => undefined);
    const watcher = this;
    return {
      get live() {
        return { via: 'pub/sub' as const, healthy: watcher.healthy, recovers: true };
      },
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

  /** Up (ready, subscribed again) or down (closed): each listener hears it once, then reads once. */
  private setHealth(healthy: boolean): void {
    if (this.healthy === healthy && healthy === false) return;
    this.healthy = healthy;
    for (const set of this.listeners.values()) for (const listener of set) listener.health(healthy);
    this.notifyAll();
  }

  private notifyAll(): void {
    for (const channel of this.listeners.keys()) this.notify(channel);
  }

  private notify(channel: string): void {
    for (const listener of this.listeners.get(channel) ?? []) listener.change();
  }
}

interface Listener {
  readonly change: () => void;
  readonly health: (healthy: boolean) => void;
}
