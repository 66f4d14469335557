import { csvCell, inferCsvTypes } from '../../../domain/reporting/csv-types';

describe('CSV column types (docs/reporting.md "csv")', () => {
  it('gives a column the first type every non-empty value passes, else string', () => {
    const sample = [
      ['1', 'true', '2024-02-29', '007', '12.50', ''],
      ['-2.5', 'False', '2024-12-31', '8', '1e3', ''],
      ['', '', '', '9', '3', ''],
    ];
    expect(inferCsvTypes(sample, 6)).toEqual(['number', 'boolean', 'date', 'string', 'string', 'string']);
    expect(inferCsvTypes([['2024-02-30'], ['9007199254740993']], 1)).toEqual(['string']);
    expect(inferCsvTypes([['9007199254740993']], 1)).toEqual(['string']);
    expect(inferCsvTypes([], 2)).toEqual(['string', 'string']);
  });

  it('converts cells by their column type; a value that does not fit stays its text', () => {
    expect(csvCell('number', '12.50')).toBe(12.5);
    expect(csvCell('number', ' 7 ')).toBe(7);
    expect(csvCell('number', '')).toBeNull();
    expect(csvCell('number', 'n/a')).toBe('n/a');
    expect(csvCell('boolean', 'TRUE')).toBe(true);
    expect(csvCell('boolean', 'maybe')).toBe('maybe');
    expect(csvCell('date', '2024-01-05')).toBe('2024-01-05');
    expect(csvCell('date', '2024-02-30')).toBe('2024-02-30');
    expect(csvCell('date', '  ')).toBeNull();
    expect(csvCell('string', '')).toBe('');
    expect(csvCell('string', '=SUM(A1)')).toBe('=SUM(A1)');
  });
});
