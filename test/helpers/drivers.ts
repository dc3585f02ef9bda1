import type { Driver } from '../../src/core/stores/store';

/**
 * A Driver that delegates to `inner` except for the methods in `overrides` — for injecting a
 * failure (e.g. a release that throws) into otherwise real behaviour.
 */
export function wrapDriver(
  inner: Driver,
  overrides: Partial<Pick<Driver, 'claim' | 'extend' | 'release' | 'read' | 'compareAndSwap' | 'close'>>,
): Driver {
  return {
    name: inner.name,
    distributed: inner.distributed,
    claim: overrides.claim ?? inner.claim.bind(inner),
    extend: overrides.extend ?? inner.extend.bind(inner),
    release: overrides.release ?? inner.release.bind(inner),
    read: overrides.read ?? inner.read.bind(inner),
    compareAndSwap: overrides.compareAndSwap ?? inner.compareAndSwap.bind(inner),
    close: overrides.close ?? inner.close.bind(inner),
  };
}

/** Every call a driver received, with its arguments, for asserting what reaches a backend. */
export interface DriverCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

export function recordingDriver(inner: Driver): { driver: Driver; calls: DriverCall[] } {
  const calls: DriverCall[] = [];
  const record =
    <A extends unknown[], R>(method: string, fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls.push({ method, args });
      return fn(...args);
    };
  return {
    calls,
    driver: wrapDriver(inner, {
      claim: record('claim', inner.claim.bind(inner)),
      extend: record('extend', inner.extend.bind(inner)),
      release: record('release', inner.release.bind(inner)),
      read: record('read', inner.read.bind(inner)),
      compareAndSwap: record('compareAndSwap', inner.compareAndSwap.bind(inner)),
    }),
  };
}
