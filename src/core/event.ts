import type { Disposable } from './stores/store';

/** Subscribes a listener; the returned Disposable unsubscribes it. The shape VS Code's events have. */
export type Event<T> = (listener: (event: T) => void) => Disposable;

/**
 * A typed event source, VS Code style: keep the emitter private as `_onDidX` and expose
 * `readonly onDidX = this._onDidX.event`. A listener that throws never stops the others nor the
 * code that fired: its error is rethrown on its own task, where it surfaces as uncaught.
 */
export class Emitter<T> {
  #listeners = new Set<(event: T) => void>();
  #disposed = false;

  readonly event: Event<T> = listener => {
    if (this.#disposed) return { dispose: () => undefined };
    const own = (event: T) => listener(event);
    this.#listeners.add(own);
    return {
      dispose: () => {
        this.#listeners.delete(own);
      },
    };
  };

  fire(event: T): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** Removes every listener; later subscriptions are ignored. Safe to call twice. */
  dispose(): void {
    this.#disposed = true;
    this.#listeners.clear();
  }
}
