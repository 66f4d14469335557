import { AppError } from '@formwork/wire';

/**
 * Caps on what a database server may send, counted from the message headers as the bytes arrive,
 * before the driver buffers a message (docs/security.md "Reporting: caps while reading"). The
 * drivers (node-postgres, mysql2) read a whole protocol message into memory before they hand it on,
 * and a tenant chooses the server: one 20 MB row, or rows past the result cap, would be buffered
 * before any row or byte cap of the runner could look at them. The guard sees every chunk first
 * (it is called before the driver's parser) and, past a cap, destroys the socket: the driver then
 * fails the query, and the runner answers with `tripped()`, `413 ERR_QRY_010`.
 */
export interface WireCaps {
  /** Largest single protocol message (a row, an error, a catalogue answer). */
  maxMessageBytes: number;
  /** All bytes of counted messages on the connection together (PostgreSQL: DataRow messages; MySQL: every packet). */
  maxTotalBytes: number;
}

/** The caps of a result limited to `maxBytes` of NDJSON: a row's JSON is at least as long as its wire form, so twice the cap (and a megabyte) leaves room for any honest server. */
export function resultWireCaps(maxBytes: number): WireCaps {
  return { maxMessageBytes: maxBytes + 64 * 1024, maxTotalBytes: 2 * maxBytes + 1024 * 1024 };
}

/** Connection tests and schema discovery: a version string and a catalogue listing, never more. */
export const PROBE_WIRE_CAPS: WireCaps = { maxMessageBytes: 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024 };

type Framing = 'postgres' | 'mysql';

export interface WireGuard {
  /** Counts one chunk as the server sent it; false once a cap is passed (the caller destroys the socket). */
  accept(chunk: Buffer): boolean;
  /** The error to answer with once a cap was passed, else null. */
  tripped(): AppError | null;
}

/**
 * PostgreSQL frames are a type byte and a 4-byte big-endian length that counts itself; MySQL
 * packets a 3-byte little-endian payload length and a sequence byte, with payloads of exactly
 * 0xFFFFFF bytes continued by the next packet (one logical message).
 */
export function createWireGuard(framing: Framing, caps: WireCaps): WireGuard {
  const headerSize = framing === 'postgres' ? 5 : 4;
  const header = Buffer.alloc(headerSize);
  let headerFill = 0;
  let remaining = 0;
  let logical = 0;
  let total = 0;
  let error: AppError | null = null;

  const trip = (message: string, limit: number) => {
    error ??= new AppError('ERR_QRY_010', message, { limit, stage: 'server_message' });
    return false;
  };

  /** A complete header: the message's payload size, checked before one byte of it is kept. */
  function onHeader(): boolean {
    let payload: number;
    let counted: boolean;
    if (framing === 'postgres') {
      payload = header.readUInt32BE(1) - 4;
      // DataRow ('D') carries the rows; the others are small or announced by the server's own catalogue.
      counted = header[0] === 0x44;
    } else {
      payload = header.readUIntLE(0, 3);
      counted = true;
    }
    logical += payload;
    if (payload < 0 || logical > caps.maxMessageBytes) {
      return trip(`The database server sent a message of ${logical} bytes or more; at most ${caps.maxMessageBytes} are read`, caps.maxMessageBytes);
    }
    if (counted) {
      total += payload;
      if (total > caps.maxTotalBytes) return trip(`The database server sent more than ${caps.maxTotalBytes} bytes of rows`, caps.maxTotalBytes);
    }
    // A MySQL payload of exactly 0xFFFFFF bytes continues in the next packet: the same message.
    if (!(framing === 'mysql' && payload === 0xffffff)) logical = 0;
    remaining = payload;
    return true;
  }

  return {
    accept(chunk) {
      if (error) return false;
      let offset = 0;
      while (offset < chunk.length) {
        if (remaining > 0) {
          const take = Math.min(remaining, chunk.length - offset);
          remaining -= take;
          offset += take;
          continue;
        }
        const take = Math.min(headerSize - headerFill, chunk.length - offset);
        chunk.copy(header, headerFill, offset, offset + take);
        headerFill += take;
        offset += take;
        if (headerFill < headerSize) break;
        headerFill = 0;
        if (!onHeader()) return false;
      }
      return true;
    },
    tripped: () => error,
  };
}
