import { countNodes, PieceAssembler, pieces, type Piece } from '../../adapters/rendering/piecewise';

/** Values cross to the Excel threads in pieces (adapters/rendering/piecewise.ts): each small, all together the same value. */
function roundTrip(value: unknown, maxNodes: number): { value: unknown; pieces: Piece[] } {
  const all = [...pieces(value, maxNodes)];
  const assembler = new PieceAssembler();
  // Through structured clone, as postMessage sends them.
  for (const piece of all) assembler.apply(structuredClone(piece));
  return { value: assembler.value, pieces: all };
}

function pieceNodes(piece: Piece): number {
  if (piece.kind === 'set') return countNodes(piece.value, Infinity);
  if (piece.kind === 'items') return piece.items.reduce<number>((n, item) => n + countNodes(item, Infinity), 0);
  return piece.entries.reduce<number>((n, [, member]) => n + countNodes(member, Infinity), 0);
}

describe('piecewise transfer', () => {
  it('sends small values whole', () => {
    for (const value of [null, 42, 'text', new Date('2024-01-02T00:00:00Z'), [], {}, { a: [1, 2, { b: 'c' }] }]) {
      const { value: out, pieces: ps } = roundTrip(value, 100);
      expect(ps).toHaveLength(1);
      expect(out).toEqual(value);
    }
  });

  it('splits a large array of rows into pieces of at most the limit, in order', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ name: `Row ${i}`, qty: i, when: new Date(i * 86_400_000) }));
    const { value, pieces: ps } = roundTrip({ title: 'T', rows }, 1000);
    expect(value).toEqual({ title: 'T', rows });
    expect(ps.length).toBeGreaterThan(40);
    for (const p of ps) expect(pieceNodes(p)).toBeLessThanOrEqual(1000);
    expect((value as { rows: unknown[] }).rows[9_999]).toEqual({ name: 'Row 9999', qty: 9_999, when: new Date(9_999 * 86_400_000) });
  });

  it('splits nested large arrays and objects with many keys', () => {
    const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i]));
    const value = { groups: [{ lines: Array.from({ length: 2500 }, (_, i) => [i, `x${i}`]) }, { lines: [] }], wide, tail: [1, 2, 3] };
    const { value: out, pieces: ps } = roundTrip(value, 500);
    expect(out).toEqual(value);
    for (const p of ps) expect(pieceNodes(p)).toBeLessThanOrEqual(500);
  });

  it('keeps __proto__ and constructor keys of tenant data as ordinary properties', () => {
    const data = JSON.parse(`{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"rows":[${Array.from({ length: 300 }, () => '{"__proto__":{"p":1}}').join(',')}]}`);
    const { value: out } = roundTrip(data, 50) as { value: Record<string, any> };
    // Had a piece assigned `__proto__`, its value would have become the prototype.
    expect(out.polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor', 'rows']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: true });
    expect(out.rows[299].p).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(out.rows[299], '__proto__')?.value).toEqual({ p: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('counts iteratively: 100,000 levels of nesting need no stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(countNodes(deep, Infinity)).toBe(100_001);
    expect(countNodes(deep, 10)).toBe(10);
  });
});
