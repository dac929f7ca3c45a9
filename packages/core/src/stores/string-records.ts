/**
 * Append-only records of strings held in `Uint8Array` chunks, for the in-memory event store.
 *
 * The collector never traces a byte array's contents. So a million stored events cost it a few
 * hundred chunks, not millions of strings and objects: each full collection of a large store would
 * otherwise trace them all (docs/performance.md, "Memory per event").
 *
 * Each string is stored exactly. An ASCII string takes one byte a code unit (written by a loop
 * when short and by `TextEncoder.encodeInto` otherwise, read by `TextDecoder`). Any other string takes its UTF-16 code units,
 * two bytes each, so a lone surrogate survives as well. A string never takes more than two bytes a
 * code unit, which is what the event store's bound charges for it (`eventMemoryBytes`).
 *
 * A record is its fields' byte lengths (4 bytes each, the top bit marking UTF-16), then the fields.
 * A record never spans two chunks. Chunks grow from 64 KiB to 8 MiB; a record larger than that
 * gets a chunk of its own size.
 * @module
 */

const FIRST_CHUNK_BYTES = 64 * 1024;
const MAX_CHUNK_BYTES = 8 * 1024 * 1024;
const UTF16 = 0x8000_0000;
const LENGTH = 0x7fff_ffff;
/** Strings up to this many code units are written by a loop: cheaper than a native call. */
const SHORT = 96;
/** Code units turned into a string per `String.fromCharCode` call (its argument count). */
const DECODE_BATCH = 8192;

const encoder = new TextEncoder();
const ascii = new TextDecoder();

export class StringRecords {
  readonly #fields: number;
  readonly #chunks: Uint8Array[] = [];
  #current = new Uint8Array(0);
  #used = 0;
  #nextChunkBytes = FIRST_CHUNK_BYTES;
  #chunkOf = new Uint32Array(256);
  #startOf = new Uint32Array(256);
  #count = 0;
  #reserved = 0;

  /** @param fields the number of strings in every record */
  constructor(fields: number) {
    this.#fields = fields;
  }

  /** Records held. */
  get count(): number {
    return this.#count;
  }

  /** Bytes taken by the chunks and the record offsets (what this holds outside any string). */
  get reservedBytes(): number {
    return this.#reserved + this.#chunkOf.byteLength + this.#startOf.byteLength;
  }

  /** Stores the strings as record number `count` (from 0) and returns that number. */
  append(fields: readonly string[]): number {
    if (fields.length !== this.#fields) {
      throw new RangeError(`a record has ${this.#fields} fields, not ${fields.length}`);
    }
    let end = writeRecord(this.#current, this.#used, fields);
    if (end < 0) {
      let units = 0;
      for (const field of fields) units += field.length;
      const bound = 4 * fields.length + 2 * units;
      const size = Math.max(this.#nextChunkBytes, bound);
      this.#nextChunkBytes = Math.min(MAX_CHUNK_BYTES, this.#nextChunkBytes * 2);
      this.#current = new Uint8Array(size);
      this.#chunks.push(this.#current);
      this.#reserved += size;
      this.#used = 0;
      end = writeRecord(this.#current, 0, fields);
      if (end < 0) throw new Error("a record did not fit the chunk sized for it"); // unreachable
    }
    const record = this.#count;
    if (record === this.#chunkOf.length) {
      this.#chunkOf = grownColumn(this.#chunkOf);
      this.#startOf = grownColumn(this.#startOf);
    }
    this.#chunkOf[record] = this.#chunks.length - 1;
    this.#startOf[record] = this.#used;
    this.#used = end;
    this.#count = record + 1;
    return record;
  }

  /** Field `field` (from 0) of record `record`, exactly as appended. */
  field(record: number, field: number): string {
    const chunk = this.#locate(record, field);
    const at = this.#at;
    const bytes = this.#header & LENGTH;
    return (this.#header & UTF16) === 0
      ? ascii.decode(chunk.subarray(at, at + bytes))
      : fromUtf16(chunk, at, bytes);
  }

  /** Whether field `field` of record `record` is `text`, without making a string of it. */
  equals(record: number, field: number, text: string): boolean {
    const chunk = this.#locate(record, field);
    const at = this.#at;
    if ((this.#header & UTF16) === 0) {
      if ((this.#header & LENGTH) !== text.length) return false;
      for (let i = 0; i < text.length; i++) if (chunk[at + i] !== text.charCodeAt(i)) return false;
    } else {
      if ((this.#header & LENGTH) !== 2 * text.length) return false;
      for (let i = 0; i < text.length; i++) {
        if ((chunk[at + 2 * i]! | (chunk[at + 2 * i + 1]! << 8)) !== text.charCodeAt(i)) return false;
      }
    }
    return true;
  }

  /** Where a field starts and its header, left in `#at` and `#header`; returns its chunk. */
  #at = 0;
  #header = 0;
  #locate(record: number, field: number): Uint8Array {
    if (
      !Number.isInteger(record) ||
      !Number.isInteger(field) ||
      !(record >= 0 && record < this.#count && field >= 0 && field < this.#fields)
    ) {
      throw new RangeError(`no field ${field} of record ${record} (${this.#count} records)`);
    }
    const chunk = this.#chunks[this.#chunkOf[record]!]!;
    const start = this.#startOf[record]!;
    let at = start + 4 * this.#fields;
    for (let i = 0; i < field; i++) at += readU32(chunk, start + 4 * i) & LENGTH;
    this.#at = at;
    this.#header = readU32(chunk, start + 4 * field);
    return chunk;
  }
}

/** Writes a record at `start`; returns where it ends, or -1 when it does not fit. */
function writeRecord(chunk: Uint8Array, start: number, fields: readonly string[]): number {
  let at = start + 4 * fields.length;
  if (at > chunk.length) return -1;
  for (let i = 0; i < fields.length; i++) {
    const text = fields[i]!;
    let header: number;
    if (text.length > chunk.length - at) return -1;
    if (text.length <= SHORT && writeShortAscii(chunk, at, text)) {
      header = text.length;
    } else if (isAscii(encoder.encodeInto(text, chunk.subarray(at)), text.length)) {
      header = text.length; // every code unit was ASCII: one byte each
    } else {
      if (2 * text.length > chunk.length - at) return -1;
      for (let u = 0; u < text.length; u++) {
        const unit = text.charCodeAt(u);
        chunk[at + 2 * u] = unit & 0xff;
        chunk[at + 2 * u + 1] = unit >>> 8;
      }
      header = (2 * text.length) | UTF16;
    }
    writeU32(chunk, start + 4 * i, header >>> 0);
    at += header & LENGTH;
  }
  return at;
}

/** Writes `text` a byte a code unit if every unit is ASCII; false (bytes half written) if not. */
function writeShortAscii(chunk: Uint8Array, at: number, text: string): boolean {
  for (let u = 0; u < text.length; u++) {
    const unit = text.charCodeAt(u);
    if (unit >= 0x80) return false;
    chunk[at + u] = unit;
  }
  return true;
}

/** Whether `encodeInto` wrote the whole text a byte a code unit (so every unit was ASCII). */
function isAscii(result: { readonly read: number; readonly written: number }, units: number): boolean {
  return result.read === units && result.written === units;
}

function fromUtf16(chunk: Uint8Array, at: number, bytes: number): string {
  const units: number[] = [];
  let text = "";
  for (let i = at; i < at + bytes; i += 2) {
    units.push(chunk[i]! | (chunk[i + 1]! << 8));
    if (units.length === DECODE_BATCH) {
      text += String.fromCharCode(...units);
      units.length = 0;
    }
  }
  return text + String.fromCharCode(...units);
}

function readU32(chunk: Uint8Array, at: number): number {
  return (chunk[at]! | (chunk[at + 1]! << 8) | (chunk[at + 2]! << 16) | (chunk[at + 3]! << 24)) >>> 0;
}

function writeU32(chunk: Uint8Array, at: number, value: number): void {
  chunk[at] = value & 0xff;
  chunk[at + 1] = (value >>> 8) & 0xff;
  chunk[at + 2] = (value >>> 16) & 0xff;
  chunk[at + 3] = value >>> 24;
}

/** A column twice as long, holding the same values first. */
export function grownColumn<T extends Uint32Array | Float64Array>(column: T): T {
  const next = new (column.constructor as new (length: number) => T)(column.length * 2);
  next.set(column);
  return next;
}
