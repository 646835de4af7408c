/**
 * Read coalescing for the HTTP request path: concurrent callers with one key share one run of a
 * read that starts after each of them called — never a run already under way (so a caller never
 * gets an answer read before it arrived: a token revoked before a request arrives is refused, as
 * without coalescing). 64 requests in flight with one bearer token then cost about two
 * authentications' reads at a time instead of 64.
 *
 * May import: nothing (pure promise plumbing).
 */

interface Slot<V> {
  /** the run not yet started (callers join it), or null. */
  queued: Promise<V> | null;
  /** settles when the newest run has settled. */
  tail: Promise<void>;
}

const noop = (): void => undefined;

/** Per key, at most one run of `fn` in flight and one queued behind it that later callers join. */
export class NextRun<K, V> {
  private readonly slots = new Map<K, Slot<V>>();

  /**
   * The result of a run of `fn` that starts after this call: the queued run for `key` if there is
   * one, else a new run queued behind the one in flight (or started now).
   * @returns what that run resolves to; rejects with what it throws (every joined caller alike).
   */
  run(key: K, fn: () => Promise<V>): Promise<V> {
    const slot = this.slots.get(key);
    if (slot?.queued) return slot.queued;
    const s: Slot<V> = slot ?? { queued: null, tail: Promise.resolve() };
    const p = s.tail.then(() => {
      s.queued = null;
      return fn();
    });
    s.queued = p;
    const tail = p.then(noop, noop);
    s.tail = tail;
    this.slots.set(key, s);
    void tail.then(() => {
      if (s.tail === tail) this.slots.delete(key);
    });
    return p;
  }
}
