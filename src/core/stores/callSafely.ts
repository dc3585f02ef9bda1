/**
 * Calls a watch's listener (an owner's `onChange` or `onHealth`) so that its failure stays its own: it
 * never breaks delivery to other listeners, nor throws into the client or event emitter that delivered
 * the event (ioredis, fs.watch, the etcd client).
 */
export function callSafely(fn: () => void): void {
  try {
    fn();
  } catch {
    // The listener's own failure: the watch goes on.
  }
}
