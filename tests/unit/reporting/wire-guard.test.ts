import { createWireGuard, resultWireCaps } from '../../../packages/query-runners/src/wire-guard';

/** PostgreSQL frame: type byte, 4-byte big-endian length counting itself, payload. */
function pg(type: string, payload: number): Buffer {
  const b = Buffer.alloc(5 + payload, 0x61);
  b.write(type, 0, 'latin1');
  b.writeUInt32BE(payload + 4, 1);
  return b;
}

/** MySQL packet: 3-byte little-endian payload length, sequence byte, payload. */
function my(payload: number, seq = 0): Buffer {
  const b = Buffer.alloc(4 + payload, 0x61);
  b.writeUIntLE(payload, 0, 3);
  b[3] = seq;
  return b;
}

/** Feeds `bytes` in chunks of `size` (headers split across chunks too); the index of the chunk that tripped, or -1. */
function feed(guard: ReturnType<typeof createWireGuard>, bytes: Buffer, size: number): number {
  for (let i = 0, n = 0; i < bytes.length; i += size, n += 1) if (!guard.accept(bytes.subarray(i, i + size))) return n;
  return -1;
}

describe('wire guard (caps on what a database server sends, before the driver buffers it)', () => {
  const caps = { maxMessageBytes: 1000, maxTotalBytes: 5000 };

  it('lets honest PostgreSQL traffic through, in any chunking, and trips nothing', () => {
    const traffic = Buffer.concat([pg('R', 4), pg('T', 40), ...Array.from({ length: 4 }, () => pg('D', 999)), pg('C', 10), pg('Z', 1)]);
    for (const size of [1, 3, 5, 7, 64, traffic.length]) {
      const guard = createWireGuard('postgres', caps);
      expect(feed(guard, traffic, size)).toBe(-1);
      expect(guard.tripped()).toBeNull();
    }
  });

  it('trips on the header of a PostgreSQL message over the cap, before its payload arrives', () => {
    const guard = createWireGuard('postgres', caps);
    // Only the header and one byte of a 20 MB row: the guard knows from the header alone.
    const header = pg('D', 20 * 1024 * 1024).subarray(0, 6);
    expect(feed(guard, Buffer.concat([pg('T', 40), header]), 2)).toBeGreaterThanOrEqual(0);
    expect(guard.tripped()).toMatchObject({ code: 'ERR_QRY_010', relatedInfo: { limit: 1000, stage: 'server_message' } });
    expect(guard.accept(Buffer.from('more'))).toBe(false);
  });

  it('counts DataRow bytes only against the total, and trips past it', () => {
    const guard = createWireGuard('postgres', caps);
    // Non-row messages do not count: five 999-byte notices pass.
    expect(feed(guard, Buffer.concat(Array.from({ length: 6 }, () => pg('N', 999))), 100)).toBe(-1);
    expect(feed(guard, Buffer.concat(Array.from({ length: 6 }, () => pg('D', 999))), 100)).toBeGreaterThanOrEqual(0);
    expect(guard.tripped()?.message).toBe('The database server sent more than 5000 bytes of rows');
  });

  it('adds up a MySQL message continued over 0xFFFFFF-byte packets, and lets small packets through', () => {
    const honest = createWireGuard('mysql', { maxMessageBytes: 100, maxTotalBytes: 10_000 });
    expect(feed(honest, Buffer.concat([my(50), my(99, 1), my(0, 2)]), 3)).toBe(-1);
    const big = createWireGuard('mysql', { maxMessageBytes: 0xffffff + 10, maxTotalBytes: 64 * 1024 * 1024 });
    // A full packet passes on its own; its continuation makes the message too large.
    const full = Buffer.alloc(4);
    full.writeUIntLE(0xffffff, 0, 3);
    expect(big.accept(full)).toBe(true);
    expect(big.accept(Buffer.alloc(0xffffff))).toBe(true);
    expect(big.accept(my(11, 1).subarray(0, 4))).toBe(false);
    expect(big.tripped()?.code).toBe('ERR_QRY_010');
  });

  it('sizes a result cap so that an honest result of maxBytes passes', () => {
    expect(resultWireCaps(5 * 1024 * 1024)).toEqual({ maxMessageBytes: 5 * 1024 * 1024 + 65536, maxTotalBytes: 11 * 1024 * 1024 });
  });
});
