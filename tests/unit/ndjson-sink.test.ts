import { NdjsonWriter } from '../../packages/query-runners/src/ndjson-sink';
import type { QueryLimits } from '../../domain/reporting/query-runner';

const limits = (over: Partial<QueryLimits> = {}) => ({ maxRows: 10, maxBytes: 10_000, onRowLimit: 'fail' as const, ...over });

function writer(over: Partial<QueryLimits> = {}) {
  const lines: string[] = [];
  return { lines, ndjson: new NdjsonWriter({ write: async (line) => void lines.push(line) }, limits(over)) };
}

describe('NdjsonWriter', () => {
  it('writes one JSON object per line with values as a reader of the file expects them', async () => {
    const { lines, ndjson } = writer();
    await ndjson.push(
      ['n', 'exact', 'big', 'at', 'bytes', 'nothing', 'json', 'inf'],
      [1.5, '12345678901234567890.01', 2n ** 64n, new Date('2026-03-01T10:00:00+01:00'), Buffer.from('hi'), undefined, { a: [1] }, Infinity],
    );
    expect(lines).toEqual([
      '{"n":1.5,"exact":"12345678901234567890.01","big":"18446744073709551616","at":"2026-03-01T09:00:00.000Z","bytes":"aGk=","nothing":null,"json":{"a":[1]},"inf":"Infinity"}\n',
    ]);
    expect(ndjson).toMatchObject({ rowCount: 1, bytes: Buffer.byteLength(lines[0]), truncated: false });
  });

  it('counts bytes in UTF-8 and refuses the line that would pass maxBytes (ERR_QRY_010)', async () => {
    const line = '{"s":"é"}\n'; // 11 bytes
    const { lines, ndjson } = writer({ maxBytes: 22 });
    await ndjson.push(['s'], ['é']);
    await ndjson.push(['s'], ['é']);
    await expect(ndjson.push(['s'], ['é'])).rejects.toMatchObject({ code: 'ERR_QRY_010', relatedInfo: { limit: 22 } });
    expect(lines).toEqual([line, line]);
    expect(ndjson.bytes).toBe(22);
  });

  it('past maxRows: fail throws ERR_QRY_008, truncate stops and says so', async () => {
    const failing = writer({ maxRows: 2 });
    await failing.ndjson.push(['i'], [1]);
    await failing.ndjson.push(['i'], [2]);
    await expect(failing.ndjson.push(['i'], [3])).rejects.toMatchObject({ code: 'ERR_QRY_008', relatedInfo: { limit: 2 } });

    const cutting = writer({ maxRows: 2, onRowLimit: 'truncate' });
    expect(await cutting.ndjson.push(['i'], [1])).toBe(true);
    expect(await cutting.ndjson.push(['i'], [2])).toBe(true);
    expect(await cutting.ndjson.push(['i'], [3])).toBe(false);
    expect(cutting.lines).toHaveLength(2);
    expect(cutting.ndjson).toMatchObject({ rowCount: 2, truncated: true });
  });
});
