import { text } from 'node:stream/consumers';
import type { ResultColumnType, ResultRow } from '../../../domain/reporting/bind-datasets';
import { csvStream, guardFormula } from '../../../domain/reporting/csv';

const csv = (columns: ResultColumnType[], rows: ResultRow[]) => text(csvStream(columns, rows));

/** One cell as written in a row of a one-column file (header `c`). */
async function cell(value: unknown, exactNumeric = false): Promise<string> {
  const file = await csv([{ name: 'c', dataType: exactNumeric ? 'numeric' : 'text' }], [{ c: value }]);
  return file.slice('c\r\n'.length, -'\r\n'.length);
}

describe('CSV lines', () => {
  it('quotes fields holding a quote, comma, CR or LF, doubling quotes (RFC 4180)', async () => {
    expect(await cell('plain')).toBe('plain');
    expect(await cell('a,b')).toBe('"a,b"');
    expect(await cell('say "hi"')).toBe('"say ""hi"""');
    expect(await cell('two\nlines')).toBe('"two\nlines"');
    expect(await cell('cr\rhere')).toBe('"cr\rhere"');
    expect(await cell('')).toBe('');
    expect(await cell('Zürich ✓')).toBe('Zürich ✓');
  });

  it('guards strings starting with = + - @ tab or CR with a leading quote (OWASP)', async () => {
    expect(await cell('=SUM(A1:A2)')).toBe("'=SUM(A1:A2)");
    expect(await cell('+1')).toBe("'+1");
    expect(await cell('-2')).toBe("'-2");
    expect(await cell('@cmd')).toBe("'@cmd");
    expect(await cell('\tx')).toBe("'\tx");
    expect(await cell('\rx')).toBe('"\'\rx"');
    expect(await cell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(await cell('a=b')).toBe('a=b');
    expect(guardFormula('=1')).toBe("'=1");
    expect(guardFormula('１')).toBe('１');
  });

  it('writes numbers, booleans, nulls and JSON; numbers and exact decimal strings are never guarded', async () => {
    expect(await cell(-5)).toBe('-5');
    expect(await cell(1.5)).toBe('1.5');
    expect(await cell(-Infinity)).toBe("'-Infinity");
    expect(await cell(true)).toBe('true');
    expect(await cell(false)).toBe('false');
    expect(await cell(null)).toBe('');
    expect(await cell(undefined)).toBe('');
    expect(await cell('-12.50', true)).toBe('-12.50');
    expect(await cell('-12.50', false)).toBe("'-12.50");
    expect(await cell('-1e5', true)).toBe("'-1e5");
    expect(await cell({ a: 1, b: 'x' })).toBe('"{""a"":1,""b"":""x""}"');
    expect(await cell([1, 2])).toBe('"[1,2]"');
  });

  it('writes a header in the query column order and rows with CRLF line ends', async () => {
    const columns = [
      { name: 'b', dataType: 'text' },
      { name: 'a', dataType: 'numeric' },
    ];
    expect(await csv(columns, [])).toBe('b,a\r\n');
    expect(await csv(columns, [{ a: '-1.10', b: '-x' }, { a: null }])).toBe("b,a\r\n'-x,-1.10\r\n,\r\n");
    // Column names are text, even of an exact numeric column; a dotted name is a name, not a path.
    expect(await csv([{ name: '-1', dataType: 'numeric' }, { name: 'a.b', dataType: 'text' }], [{ '-1': '-1', 'a.b': 'x' }])).toBe("'-1,a.b\r\n-1,x\r\n");
  });

  it('without columns takes the header from the first row', async () => {
    expect(await csv([], [])).toBe('');
    expect(await csv([], [{ x: 1, '=y': 2 }, { x: 3, '=y': 4 }])).toBe("x,'=y\r\n1,2\r\n3,4\r\n");
  });

  it('ends the stream with the error of its rows', async () => {
    async function* failing(): AsyncGenerator<ResultRow> {
      yield { a: 1 };
      throw new Error('storage gone');
    }
    await expect(text(csvStream([{ name: 'a', dataType: 'int4' }], failing()))).rejects.toThrow('storage gone');
  });
});
