/**
 * Cooperative yielding for long computations over a tenant's log or tables (replay, metrics,
 * verification): the server runs every tenant on one event loop, so a long synchronous stretch
 * for one tenant delays every other tenant's requests. A yielder lets the loop run (other
 * requests, I/O) once the current stretch has used its time slice.
 */

/** Default slice, in ms: a stretch longer than this yields to the event loop. */
export const SLICE_MS = 4;

/**
 * A function to call between units of work: it resolves at once while the current stretch is
 * shorter than `sliceMs`, and otherwise after one turn of the event loop (`setImmediate`).
 */
export function yielder(sliceMs: number = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
