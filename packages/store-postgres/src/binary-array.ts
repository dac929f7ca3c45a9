/**
 * One-dimensional `text[]`, `timestamptz[]` and `boolean[]` parameters in PostgreSQL's binary
 * format (what `array_send` writes and `array_recv` reads), for the event insert's columns. The
 * driver sends a `Buffer` parameter in binary format, and PostgreSQL then copies each element as
 * it comes, where a text array literal (`{"…","…"}`) is escaped character by character here and
 * parsed character by character there (`array_in`): less CPU on both sides for the same values
 * (docs/performance.md).
 *
 * Layout: int32 dimensions (1), int32 has-nulls flag, uint32 element type OID, int32 length, int32
 * lower bound (1), then per element an int32 byte length (-1: NULL) and its bytes. Text is UTF-8 as
 * `Buffer` encodes it, which is what the driver sends for a string parameter too: a lone surrogate
 * becomes U+FFFD. A timestamptz element is 8 bytes: int64 microseconds since 2000-01-01 UTC; a
 * boolean element one byte, 1 or 0.
 */

const BOOL_OID = 16;
const TEXT_OID = 25;
const TIMESTAMPTZ_OID = 1184;
const HEADER_BYTES = 20;
/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in milliseconds since the Unix epoch. */
const POSTGRES_EPOCH_MS = 946_684_800_000;

/** `values` as a binary `text[]` (null and undefined: NULL elements). */
export function textArray(values: readonly (string | null | undefined)[]): Buffer {
  let size = HEADER_BYTES + 4 * values.length;
  let hasNull = false;
  const lengths = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      hasNull = true;
      lengths[i] = -1;
    } else {
      lengths[i] = Buffer.byteLength(value, "utf8");
      size += lengths[i]!;
    }
  }
  const buffer = Buffer.allocUnsafe(size);
  let offset = writeHeader(buffer, hasNull, TEXT_OID, values.length);
  for (let i = 0; i < values.length; i++) {
    const length = lengths[i]!;
    offset = buffer.writeInt32BE(length, offset);
    if (length > 0) offset += buffer.write(values[i]!, offset, length, "utf8");
  }
  return buffer;
}

/**
 * Times in milliseconds since the Unix epoch as a binary `timestamptz[]`, truncated to whole
 * milliseconds as `new Date(ms)` does.
 * @throws RangeError for a value that is not a valid time (`new Date(ms)` would be an Invalid Date).
 */
export function timestamptzArray(values: readonly number[]): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + 12 * values.length);
  let offset = writeHeader(buffer, false, TIMESTAMPTZ_OID, values.length);
  for (const value of values) {
    const ms = new Date(value).getTime();
    if (Number.isNaN(ms)) throw new RangeError(`invalid time value: ${value}`);
    offset = buffer.writeInt32BE(8, offset);
    offset = buffer.writeBigInt64BE(BigInt(ms - POSTGRES_EPOCH_MS) * 1000n, offset);
  }
  return buffer;
}

/** `values` as a binary `boolean[]` (no NULL elements). */
export function boolArray(values: readonly boolean[]): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + 5 * values.length);
  let offset = writeHeader(buffer, false, BOOL_OID, values.length);
  for (const value of values) {
    offset = buffer.writeInt32BE(1, offset);
    offset = buffer.writeUInt8(value ? 1 : 0, offset);
  }
  return buffer;
}

function writeHeader(buffer: Buffer, hasNull: boolean, elementOid: number, length: number): number {
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNull ? 1 : 0, 4);
  buffer.writeUInt32BE(elementOid, 8);
  buffer.writeInt32BE(length, 12);
  buffer.writeInt32BE(1, 16);
  return HEADER_BYTES;
}
