/**
 * HalfSipHash-2-4 with a 32-bit output (Aumasson and Bernstein; the reference implementation is
 * `halfsiphash.c` of github.com/veorq/SipHash): a keyed hash of 32-bit words. Whoever does not know
 * the 64-bit key cannot choose inputs that collide, so a hash table keyed by it stays fast whatever
 * keys a client sends. The in-memory event store indexes idempotency keys with it.
 *
 * Checked against the reference's 64 published vectors (`vectors_hsip32`).
 * @module
 */

/** The four state words, v0–v3, shared by every call (JS runs one call at a time). */
const v = new Int32Array(4);

/**
 * The hash of `data[0..length)` under the key `k0`, `k1` (the key's bytes 0–3 and 4–7, little
 * endian), as an unsigned 32-bit integer (the reference's 4 output bytes, little endian).
 */
export function halfSipHash24(k0: number, k1: number, data: Uint8Array, length: number): number {
  v[0] = k0;
  v[1] = k1;
  v[2] = 0x6c796765 ^ k0;
  v[3] = 0x74656462 ^ k1;
  const end = length - (length & 3);
  let i = 0;
  for (; i < end; i += 4) {
    compress(data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
  }
  let b = length << 24;
  const left = length & 3;
  if (left === 3) b |= data[i + 2]! << 16;
  if (left >= 2) b |= data[i + 1]! << 8;
  if (left >= 1) b |= data[i]!;
  compress(b);
  v[2] = v[2]! ^ 0xff;
  rounds(4);
  return (v[1]! ^ v[3]!) >>> 0;
}

/** One message word: 2 rounds between `v3 ^= m` and `v0 ^= m`. */
function compress(m: number): void {
  v[3] = v[3]! ^ m;
  rounds(2);
  v[0] = v[0]! ^ m;
}

/** SipRound on 32-bit words, `n` times. */
function rounds(n: number): void {
  let v0 = v[0]!;
  let v1 = v[1]!;
  let v2 = v[2]!;
  let v3 = v[3]!;
  for (let r = 0; r < n; r++) {
    v0 = (v0 + v1) | 0;
    v1 = (v1 << 5) | (v1 >>> 27);
    v1 ^= v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = (v3 << 8) | (v3 >>> 24);
    v3 ^= v2;
    v0 = (v0 + v3) | 0;
    v3 = (v3 << 7) | (v3 >>> 25);
    v3 ^= v0;
    v2 = (v2 + v1) | 0;
    v1 = (v1 << 13) | (v1 >>> 19);
    v1 ^= v2;
    v2 = (v2 << 16) | (v2 >>> 16);
  }
  v[0] = v0;
  v[1] = v1;
  v[2] = v2;
  v[3] = v3;
}
