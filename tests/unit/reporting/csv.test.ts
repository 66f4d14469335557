import { csvCell, csvFormatter, csvText } from '../../../domain/reporting/csv';

describe('CSV lines', () => {
  it('quotes fields holding a quote, comma, CR or LF, doubling quotes (RFC 4180)', () => {
    expect(csvText('plain')).toBe('plain');
    expect(csvText('a,b')).toBe('"a,b"');
    expect(csvText('say "hi"')).toBe('"say ""hi"""');
    expect(csvText('two\nlines')).toBe('"two\nlines"');
    expect(csvText('cr\rhere')).toBe('"cr\rhere"');
    expect(csvText('')).toBe('');
    expect(csvText('Zürich ✓')).toBe('Zürich ✓');
  });

  it('guards strings starting with = + - @ tab or CR with a leading quote (OWASP)', () => {
    expect(csvText('=SUM(A1:A2)')).toBe("'=SUM(A1:A2)");
    expect(csvText('+1')).toBe("'+1");
    expect(csvText('-2')).toBe("'-2");
    expect(csvText('@cmd')).toBe("'@cmd");
    expect(csvText('\tx')).toBe("'\tx");
    expect(csvText('\rx')).toBe('"\'\rx"');
    expect(csvText('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvText('a=b')).toBe('a=b');
  });

  it('writes numbers, booleans, nulls and JSON; numbers and exact decimal strings are never guarded', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(1.5)).toBe('1.5');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('-12.50', true)).toBe('-12.50');
    expect(csvCell('-12.50', false)).toBe("'-12.50");
    expect(csvCell('-1e5', true)).toBe("'-1e5");
    expect(csvCell({ a: 1, b: 'x' })).toBe('"{""a"":1,""b"":""x""}"');
    expect(csvCell([1, 2])).toBe('"[1,2]"');
  });

  it('writes a header in the query column order and rows with CRLF line ends', () => {
    const f = csvFormatter([
      { name: 'b', dataType: 'text' },
      { name: 'a', dataType: 'numeric' },
    ]);
    expect(f.header()).toBe('b,a\r\n');
    expect(f.row({ a: '-1.10', b: '-x' })).toBe("'-x,-1.10\r\n");
    expect(f.row({ a: null })).toBe(',\r\n');
  });

  it('without columns takes the header from the first row', () => {
    const f = csvFormatter([]);
    expect(f.header()).toBe('');
    expect(f.row({ x: 1, '=y': 2 })).toBe("x,'=y\r\n1,2\r\n");
    expect(f.row({ x: 3, '=y': 4 })).toBe('3,4\r\n');
  });
});
