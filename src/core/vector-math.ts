/**
 * Vector arithmetic shared by the embedder port (src/embed/) and the vector index (src/store/).
 * Pure; imports nothing.
 */

/**
 * The unit-length copy of a vector (cosine similarity becomes a dot product, and L2 distance a
 * monotone function of it). A zero vector stays zero.
 *
 * @param v - any vector.
 * @returns a new Float32Array of the same length.
 */
export function normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s);
  const out = new Float32Array(v.length);
  if (n === 0) return out;
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / n;
  return out;
}

/** The dot product of two vectors of one length (cosine similarity of unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}
