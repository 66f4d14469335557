import { startCpuBudget } from '../../../domain/cpu-budget';
import { checkHttpRequest, compileHttpRequest, type HttpRequestSpec } from '../../../domain/reporting/http-request';
import { flattenRows, httpRows, transformedRows } from '../../../domain/reporting/json-rows';
import type { ParameterDef } from '../../../domain/reporting/parameters';

const defs: ParameterDef[] = [
  { name: 'id', type: 'string' },
  { name: 'n', type: 'integer' },
  { name: 'ids', type: 'integer', multiple: true },
];

const codes = (request: HttpRequestSpec, transform: string | null = null) => checkHttpRequest(request, transform, defs).map((i) => `${i.path}:${i.code}`);

describe('http query requests', () => {
  it('accepts placeholders in path segments, query values and body strings only', () => {
    expect(codes({ method: 'POST', path: '/a/{{id}}/b', query: { q: 'x {{n}}' }, body: { s: '{{id}}', list: ['{{ids}}'] }, rowsPath: 'data.items' })).toEqual([]);
    expect(codes({ method: 'GET', path: '/a?x={{id}}', headers: { 'X-Id': '{{id}}', Host: 'h' }, query: { '{{id}}': '1' } })).toEqual([
      'request.path:INVALID_REQUEST',
      'request.query.{{id}}:PLACEHOLDER_NOT_ALLOWED',
      'request.headers.X-Id:PLACEHOLDER_NOT_ALLOWED',
      'request.headers.Host:INVALID_REQUEST',
    ]);
    expect(codes({ method: 'GET', path: '/{{nope}}/{{id', body: {} }, '$$$(')).toEqual([
      'request.path:INVALID_PLACEHOLDER',
      'request.path:UNKNOWN_PARAMETER',
      'request.body:INVALID_REQUEST',
      'transform:INVALID_EXPRESSION',
    ]);
  });

  it('substitutes values as values: encoded in the path, repeated for a list query value, typed in the body', () => {
    const compiled = compileHttpRequest(
      { method: 'POST', path: '/items/{{id}}/x', query: { id: '{{id}}', ids: '{{ids}}', both: '{{ids}};{{n}}' }, body: { n: '{{n}}', text: 'n={{n}}', ids: '{{ids}}' } },
      null,
      defs,
      { id: '../a?b=c#d %2e', n: 5, ids: [1, 2], now: new Date('2026-01-02T03:04:05Z') },
    );
    expect(compiled.path).toBe('/items/..%2Fa%3Fb%3Dc%23d%20%252e/x');
    expect(compiled.query).toEqual([
      ['id', '../a?b=c#d %2e'],
      ['ids', '1'],
      ['ids', '2'],
      ['both', '1,2;5'],
    ]);
    expect(compiled.body).toEqual({ n: 5, text: 'n=5', ids: [1, 2] });
    expect(compiled.params).toMatchObject({ id: '../a?b=c#d %2e', n: 5, now: '2026-01-02T03:04:05.000Z' });
  });

  it('refuses a value that would make a dot segment', () => {
    for (const id of ['.', '..']) {
      expect(() => compileHttpRequest({ method: 'GET', path: '/a/{{id}}' }, null, defs, { id })).toThrow(expect.objectContaining({ code: 'ERR_RPT_007' }));
    }
    expect(compileHttpRequest({ method: 'GET', path: '/a/{{id}}' }, null, defs, { id: '...' }).path).toBe('/a/...');
    // An encoded dot stays text: its % is encoded too.
    expect(compileHttpRequest({ method: 'GET', path: '/a/{{id}}' }, null, defs, { id: '%2e%2E' }).path).toBe('/a/%252e%252E');
  });
});

describe('rows of http and table queries', () => {
  const body = (value: unknown) => new Uint8Array(Buffer.from(JSON.stringify(value)));

  it('flattens objects one level, columns in the order first seen', () => {
    expect(flattenRows([{ a: 1, b: { c: 'x', d: { e: 1 } } }, { f: [1], a: null }], 'rows')).toEqual({
      columns: [
        { name: 'a', dataType: 'number' },
        { name: 'b.c', dataType: 'string' },
        { name: 'b.d', dataType: 'object' },
        { name: 'f', dataType: 'array' },
      ],
      rows: [
        [1, 'x', { e: 1 }, null],
        [null, null, null, [1]],
      ],
    });
  });

  it('takes rows from rowsPath or the body, refuses what is not an array of objects', async () => {
    expect((await httpRows({ body: body({ data: { items: [{ a: 1 }] } }), rowsPath: 'data.items', params: {} })).rows).toEqual([[1]]);
    expect((await httpRows({ body: body([{ a: 1 }, { a: 2 }]), params: {} })).rows).toEqual([[1], [2]]);
    await expect(httpRows({ body: body({ a: 1 }), params: {} })).rejects.toMatchObject({ code: 'ERR_QRY_006', relatedInfo: { dbCode: 'ROWS_NOT_ARRAY' } });
    await expect(httpRows({ body: body([1]), params: {} })).rejects.toMatchObject({ relatedInfo: { dbCode: 'ROW_NOT_OBJECT' } });
    await expect(httpRows({ body: new Uint8Array(Buffer.from('{nope')), params: {} })).rejects.toMatchObject({ relatedInfo: { dbCode: 'INVALID_JSON' } });
  });

  it('runs the transform with params and stops a runaway one on the CPU budget', async () => {
    const out = await transformedRows({ columns: ['name', 'n'], rows: [['a', '1'], ['b', '5']], transform: 'rows[$number(n) >= $$.params.min].{"name": name}', params: { min: 2 } });
    expect(out.rows).toEqual([['b']]);
    await expect(
      transformedRows({ columns: ['a'], rows: [['1']], transform: '($f := function($n){ $f($n + 1) }; $f(0))', params: {} }, startCpuBudget(50)),
    ).rejects.toMatchObject({ code: 'ERR_LIMIT_008', relatedInfo: { field: 'transform' } });
  });
});
