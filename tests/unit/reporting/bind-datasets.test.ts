import { bindDatasets, boundValue, exactNumber, isExactNumericType, numberConverter, rowsNeeded, type DatasetRows } from '../../../domain/reporting/bind-datasets';

const columns = [
  { name: 'region', dataType: 'text' },
  { name: 'units', dataType: 'int4' },
  { name: 'amount', dataType: 'numeric' },
  { name: 'big', dataType: 'int8' },
];
const rows = [
  { region: 'North', units: 3, amount: '12.50', big: '9007199254740993' },
  { region: 'South', units: 4, amount: '-0.10', big: '42' },
];
const dataset = (overrides: Partial<DatasetRows> = {}): DatasetRows => ({ name: 'sales', shape: 'rows', columns, rows, ...overrides });

describe('exact numbers', () => {
  it('knows the exact numeric types the drivers give as strings, whatever the case', () => {
    for (const t of ['int8', 'numeric', 'NEWDECIMAL', 'DECIMAL', 'LONGLONG', 'bigint']) expect(isExactNumericType(t)).toBe(true);
    for (const t of ['int4', 'float8', 'text', 'VAR_STRING', 'LONG', 'DOUBLE']) expect(isExactNumericType(t)).toBe(false);
  });

  it('turns a decimal string into a number when the number shows the same digits', () => {
    expect(exactNumber('42')).toBe(42);
    expect(exactNumber('12.50')).toBe(12.5);
    expect(exactNumber('12.00')).toBe(12);
    expect(exactNumber('-0.10')).toBe(-0.1);
    expect(exactNumber('0')).toBe(0);
    expect(Object.is(exactNumber('-0.00'), 0)).toBe(true);
    expect(exactNumber('9007199254740991')).toBe(9007199254740991);
  });

  it('keeps the string when a double would change the digits or the text is not a plain decimal', () => {
    for (const s of ['9007199254740993', '12345678901234567890', '0.1000000000000000055', '0.0000001', '1e5', ' 1', '1.', '.5', 'NaN', 'abc', '', '00.5']) {
      expect(exactNumber(s)).toBe(s);
    }
    expect(exactNumber('9'.repeat(400))).toBe('9'.repeat(400));
  });

  it('converts only exact numeric columns holding strings', () => {
    const convert = numberConverter(columns);
    expect(convert(rows[0])).toEqual({ region: 'North', units: 3, amount: 12.5, big: '9007199254740993' });
    expect(convert({ region: '7', units: 3, amount: null, big: 5 })).toEqual({ region: '7', units: 3, amount: null, big: 5 });
    expect(rows[0].amount).toBe('12.50'); // the stored row is not changed
  });
});

describe('binding datasets to variables', () => {
  it('rows: an array of row objects with numbers as numbers', () => {
    expect(boundValue(dataset())).toEqual([
      { region: 'North', units: 3, amount: 12.5, big: '9007199254740993' },
      { region: 'South', units: 4, amount: -0.1, big: 42 },
    ]);
    expect(boundValue(dataset({ rows: [] }))).toEqual([]);
  });

  it('first_row: the first row as an object, null without rows', () => {
    expect(boundValue(dataset({ shape: 'first_row' }))).toEqual({ region: 'North', units: 3, amount: 12.5, big: '9007199254740993' });
    expect(boundValue(dataset({ shape: 'first_row', rows: [] }))).toBeNull();
  });

  it('value: the first column (query order) of the first row, null without rows', () => {
    const kpi = [{ name: 'total', dataType: 'numeric' }, { name: 'n', dataType: 'int4' }];
    expect(boundValue(dataset({ shape: 'value', columns: kpi, rows: [{ n: 2, total: '1234.5600' }] }))).toBe(1234.56);
    expect(boundValue(dataset({ shape: 'value', columns: kpi, rows: [{ n: 2, total: null }] }))).toBeNull();
    expect(boundValue(dataset({ shape: 'value', columns: kpi, rows: [] }))).toBeNull();
    expect(boundValue(dataset({ shape: 'value', columns: [], rows: [{ only: 'x' }] }))).toBe('x');
  });

  it('reads one row for first_row and value, all for rows', () => {
    expect(rowsNeeded('rows')).toBe(Number.POSITIVE_INFINITY);
    expect(rowsNeeded('first_row')).toBe(1);
    expect(rowsNeeded('value')).toBe(1);
  });

  it('binds under bindTo (else the name) and adds declared parameters unless a dataset has the name', () => {
    const vars = bindDatasets(
      [dataset({ bindTo: 'lines' }), dataset({ name: 'top', shape: 'first_row' }), dataset({ name: 'region', shape: 'value' })],
      { region: 'EMEA', title: 'Sales', undeclared: 'x' },
      ['lines', 'top', 'region', 'title', 'missing'],
    );
    expect(Object.keys(vars).sort()).toEqual(['lines', 'region', 'title', 'top']);
    expect(vars.region).toBe('North');
    expect(vars.title).toBe('Sales');
    expect(vars.lines).toHaveLength(2);
  });
});
