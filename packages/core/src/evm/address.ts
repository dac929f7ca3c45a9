/**
 * EVM addresses with EIP-55 checksums (CONTRACT §3).
 * @module
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { accept, type Result, refuse } from "../result.js";

/**
 * Why `parseAddress` refused an address.
 * @example const code: AddressRefusal = "bad_checksum";
 */
export type AddressRefusal = "missing_prefix" | "wrong_length" | "not_hex" | "bad_checksum";

const HEX_DIGITS = 40;
const encoder = new TextEncoder();

function isHexCode(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** Index of the first non-hex character of `text`, or −1. */
function firstNonHex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (!isHexCode(text.charCodeAt(i))) return i;
  }
  return -1;
}

function stripPrefix(hex40OrAddress: string): string {
  return hex40OrAddress.startsWith("0x") ? hex40OrAddress.slice(2) : hex40OrAddress;
}

/**
 * The EIP-55 mixed-case form of an address: a letter is upper case when the matching nibble of
 * keccak-256(lowercase hex as ASCII) is 8 or more. Accepts 40 hex digits with or without `0x`,
 * in any case.
 * @throws RangeError when the input is not 40 hex digits (check input with `parseAddress` first).
 * @example toChecksumAddress("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"); // "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
 */
export function toChecksumAddress(hex40OrAddress: string): string {
  const hex = stripPrefix(hex40OrAddress);
  if (hex.length !== HEX_DIGITS || firstNonHex(hex) !== -1) {
    throw new RangeError("an address is 40 hexadecimal digits, optionally after 0x");
  }
  return checksumOfLower(hex.toLowerCase());
}

/** The EIP-55 form of 40 lowercase hex digits (remembered, see `checksums`). */
function checksumOfLower(lower: string): string {
  const known = checksums.get(lower);
  if (known !== undefined) return known;
  const hash = keccak_256(encoder.encode(lower));
  let out = "0x";
  for (let i = 0; i < HEX_DIGITS; i++) {
    const char = lower.charAt(i);
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? char.toUpperCase() : char;
  }
  if (checksums.size >= CHECKSUM_CACHE_SIZE) checksums.delete(checksums.keys().next().value as string);
  checksums.set(lower, out);
  return out;
}

/**
 * Lowercase hex → EIP-55 form of the addresses checksummed last (oldest dropped first): the
 * keccak-256 took about half of a position request's CPU, and partners ask about the same wallets
 * again and again. A pure function of its input, so caching changes no answer; bounded, so
 * random addresses only cost what they cost without it (~0.6 MiB when full).
 */
const checksums = new Map<string, string>();
const CHECKSUM_CACHE_SIZE = 4096;

/**
 * Validates a user-supplied address (CONTRACT §3): `0x` + 40 hex digits; all-lowercase or
 * all-uppercase hex is accepted, mixed case must match its EIP-55 checksum. The value is the
 * EIP-55 form. The reason for a bad checksum never reveals the expected form: echoing it would
 * turn a typo into a silently "corrected" (wrong) address.
 * @example parseAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"); // { ok: true, value: "0x5aAeb…BeAed" }
 * @example parseAddress("0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED").code; // "missing_prefix": the prefix is 0x
 */
export function parseAddress(input: string): Result<string, AddressRefusal> {
  if (!input.startsWith("0x")) {
    return refuse(
      "missing_prefix",
      input.startsWith("0X")
        ? "address must start with a lowercase 0x"
        : "address must be 0x followed by 40 hexadecimal digits (missing 0x)",
    );
  }
  const hex = input.slice(2);
  if (hex.length !== HEX_DIGITS) {
    return refuse(
      "wrong_length",
      `address must be 0x followed by 40 hexadecimal digits (got ${hex.length} characters after 0x)`,
    );
  }
  // One pass: the first character that is not hex, and which letter cases occur.
  let lowerLetters = false;
  let upperLetters = false;
  for (let i = 0; i < HEX_DIGITS; i++) {
    const code = hex.charCodeAt(i);
    if (code >= 97 && code <= 102) lowerLetters = true;
    else if (code >= 65 && code <= 70) upperLetters = true;
    else if (code < 48 || code > 57) {
      return refuse(
        "not_hex",
        `address must be 0x followed by 40 hexadecimal digits (character ${i + 3} is not hexadecimal)`,
      );
    }
  }
  const checksummed = checksumOfLower(upperLetters ? hex.toLowerCase() : hex);
  if (lowerLetters && upperLetters && checksummed !== input) {
    return refuse("bad_checksum", "mixed-case address fails its EIP-55 checksum");
  }
  return accept(checksummed);
}
