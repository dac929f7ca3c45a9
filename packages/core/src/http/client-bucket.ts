/**
 * What the per-address limits count by (the failed-authentication limit of CONTRACT §4, a server's
 * connections per address): an IPv4 address is itself, but one IPv6 customer is given a whole /64
 * (often /56 or /48), so counting per /128 would give a client 2^64 buckets. An IPv6 address counts
 * by its prefix (default /64), in one canonical text (RFC 5952: lower case, zeros compressed), and
 * an IPv4-mapped address (`::ffff:192.0.2.1`, what a dual-stack socket reports) is its IPv4 address.
 * @module
 */

/** Default of `AddressBucketOptions.ipv6PrefixLength`. */
export const DEFAULT_IPV6_PREFIX_LENGTH = 64;

export interface AddressBucketOptions {
  /** Leading bits of an IPv6 address that name its bucket, 1 to 128. Default 64. */
  readonly ipv6PrefixLength?: number | undefined;
}

/**
 * The bucket of a client address: an IPv4 address as given; an IPv6 address as its prefix
 * (`2001:db8:1:2::/64`), or the address alone with a prefix length of 128; an IPv4-mapped IPv6
 * address as its IPv4 address. Anything else (a name a proxy reported, a bucket already) is
 * returned as given, lower-cased when it holds a colon. Idempotent.
 * @example addressBucket("2001:DB8:0:0:1:0:0:1"); // "2001:db8::/64"
 * @example addressBucket("2001:db8::1", { ipv6PrefixLength: 128 }); // "2001:db8::1"
 * @example addressBucket("::ffff:192.0.2.1"); // "192.0.2.1"
 * @example addressBucket("192.0.2.1"); // "192.0.2.1"
 */
export function addressBucket(address: string, options: AddressBucketOptions = {}): string {
  if (!address.includes(":")) return address;
  const prefixLength = options.ipv6PrefixLength ?? DEFAULT_IPV6_PREFIX_LENGTH;
  if (!Number.isInteger(prefixLength) || prefixLength < 1 || prefixLength > 128)
    throw new RangeError(`ipv6PrefixLength must be an integer from 1 to 128, not ${prefixLength}`);
  const groups = parseIpv6(address);
  if (groups === undefined) return address.toLowerCase();
  if (
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0 &&
    groups[5] === 0xffff
  )
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  if (prefixLength === 128) return formatIpv6(groups);
  for (let i = 0; i < 8; i++) {
    const keep = Math.min(16, Math.max(0, prefixLength - i * 16));
    groups[i] = groups[i]! & ((0xffff << (16 - keep)) & 0xffff);
  }
  return `${formatIpv6(groups)}/${prefixLength}`;
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const IPV4 =
  /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(?:\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

/** The eight 16-bit groups of an IPv6 address (a zone `%eth0` is dropped), or undefined. */
function parseIpv6(text: string): number[] | undefined {
  const zone = text.indexOf("%");
  const address = zone === -1 ? text : text.slice(0, zone);
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const parts = (half: string): number[] | undefined => {
    if (half === "") return [];
    const out: number[] = [];
    const pieces = half.split(":");
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes(".")) {
        if (!IPV4.test(piece)) return undefined;
        const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else if (HEX_GROUP.test(piece)) out.push(Number.parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const head = parts(halves[0]!);
  const tail = halves.length === 2 ? parts(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  // An embedded IPv4 address ends the address: it may not be followed by "::".
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
}

/** RFC 5952 §4: lower case, no leading zeros, the longest run of two or more zero groups as "::". */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
