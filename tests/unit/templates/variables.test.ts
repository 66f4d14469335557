import { AppError } from '../../../domain/errors';
import { applyVariableInput, calculateInline, resolveVariables } from '../../../domain/templates/variables';
import type { TemplateVariable } from '../../../domain/templates/template.types';
import { buildInvoiceTemplate, invoiceVariables } from '../../support/rendering-fixtures';

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected an error');
}

const v = (name: string, type: TemplateVariable['type'], extra: Partial<TemplateVariable> = {}): TemplateVariable => ({
  name,
  type,
  required: false,
  ...extra,
});

describe('variables', () => {
  it('applies defaults and leaves optional variables null', () => {
    const out = applyVariableInput([v('title', 'string', { defaultValue: 'Untitled' }), v('note', 'string')], {});
    expect(out).toEqual({ title: 'Untitled', note: null });
  });

  it('reports a missing required variable with ERR_VALID_005 and the field', () => {
    const err = thrown(() => applyVariableInput([v('customer', 'string', { required: true })], {}));
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('ERR_VALID_005');
    expect(err.relatedInfo).toEqual({ field: 'customer', errors: [{ path: 'customer', code: 'ERR_VALID_005', message: err.message }] });
  });

  it('reports a wrong type with ERR_VALID_002, the field and the expected type', () => {
    const err = thrown(() => applyVariableInput([v('qty', 'integer')], { qty: 1.5 }));
    expect(err.code).toBe('ERR_VALID_002');
    expect(err.relatedInfo).toEqual({ field: 'qty', expected: 'integer', errors: [{ path: 'qty', code: 'ERR_VALID_002', message: err.message }] });
    expect(thrown(() => applyVariableInput([v('flag', 'boolean')], { flag: 'maybe' })).code).toBe('ERR_VALID_002');
    expect(thrown(() => applyVariableInput([v('list', 'array')], { list: {} })).code).toBe('ERR_VALID_002');
    expect(thrown(() => applyVariableInput([v('obj', 'object')], { obj: [] })).code).toBe('ERR_VALID_002');
    expect(thrown(() => applyVariableInput([v('when', 'date')], { when: '03/01/2024' })).code).toBe('ERR_VALID_002');
    expect(thrown(() => applyVariableInput([v('logo', 'image')], { logo: 'javascript:alert(1)' })).code).toBe('ERR_VALID_002');
  });

  it('coerces unambiguous strings and ISO dates', () => {
    const out = applyVariableInput(
      [v('n', 'number'), v('i', 'integer'), v('b', 'boolean'), v('d', 'date'), v('t', 'date')],
      { n: '12.5', i: '3', b: 'true', d: '2024-03-01', t: '2024-03-01T10:30:00Z' },
    );
    expect(out).toMatchObject({ n: 12.5, i: 3, b: true });
    expect(out.d).toEqual(new Date('2024-03-01T00:00:00Z'));
    expect(out.t).toEqual(new Date('2024-03-01T10:30:00Z'));
  });

  it('checks array element fields and names the element path', () => {
    const items = v('items', 'array', { items: { type: 'object', properties: [{ name: 'price', type: 'number', required: true }, { name: 'on', type: 'date' }] } });
    expect(applyVariableInput([items], { items: [{ price: '2', on: '2024-01-02' }] }).items).toEqual([
      { price: 2, on: new Date('2024-01-02T00:00:00Z') },
    ]);
    const missing = thrown(() => applyVariableInput([items], { items: [{ price: 1 }, {}] }));
    expect(missing.code).toBe('ERR_VALID_005');
    expect(missing.relatedInfo).toMatchObject({ field: 'items[1].price' });
    const wrong = thrown(() => applyVariableInput([items], { items: [{ price: 'ten' }] }));
    expect(wrong.relatedInfo).toMatchObject({ field: 'items[0].price', expected: 'number' });
  });

  it('reports the problems of every variable, the first as the answer', () => {
    const err = thrown(() => applyVariableInput([v('customer', 'string', { required: true }), v('qty', 'integer'), v('due', 'date', { required: true })], { qty: 'many' }));
    expect([err.code, err.relatedInfo?.field]).toEqual(['ERR_VALID_005', 'customer']);
    expect((err.relatedInfo?.errors as Array<{ path: string; code: string }>).map((e) => [e.path, e.code])).toEqual([
      ['customer', 'ERR_VALID_005'],
      ['qty', 'ERR_VALID_002'],
      ['due', 'ERR_VALID_005'],
    ]);
  });

  it('evaluates calculated variables with JSONata over variables and constants, in order', async () => {
    const data = await resolveVariables(buildInvoiceTemplate({
      calculatedVariables: [
        { name: 'total', expression: '$sum(items.(qty * price))' },
        { name: 'withVat', expression: 'total * (1 + vatRate)' },
        { name: 'names', expression: 'items.description' },
        { name: 'issuedYear', expression: '$substring(issuedOn, 0, 4)' },
      ],
      constants: { vatRate: 0.2, company: { name: 'X' } },
    }), invoiceVariables());
    expect(data.total).toBe(2 * 1250.5 + 100 * 0.25);
    expect(data.withVat).toBeCloseTo(2526 * 1.2);
    expect(data.names).toEqual(['Analytical engine', 'Punch cards']);
    expect(data.issuedYear).toBe('2024');
    expect(data.issuedOn).toEqual(new Date('2024-03-01T00:00:00Z'));
  });

  it('never lets the caller override a constant', async () => {
    const data = await resolveVariables({ constants: { rate: 1 } }, { rate: 99 });
    expect(data.rate).toBe(1);
  });

  it('turns a failing expression into ERR_VALID_002 and a runaway one into ERR_LIMIT_008, naming the variable', async () => {
    await expect(calculateInline([{ name: 'bad', expression: '$sum("a")' }], {})).rejects.toMatchObject({
      code: 'ERR_VALID_002',
      relatedInfo: { field: 'bad' },
    });
    const runaway = '($f := function($n){ $f($n + 1) }; $f(0))';
    await expect(calculateInline([{ name: 'loop', expression: runaway }], {})).rejects.toMatchObject({ code: 'ERR_LIMIT_008', relatedInfo: { field: 'loop' } });
  });

  it('cannot reach JavaScript from an expression', async () => {
    const out = await calculateInline([{ name: 'x', expression: '$eval("1+1")' }, { name: 'y', expression: 'constructor' }], {});
    expect(out.x).toBe(2); // JSONata's own $eval: JSONata, not JavaScript
    expect(out.y).toBeNull();
    await expect(calculateInline([{ name: 'z', expression: '$eval("process.exit(1)")' }], {})).resolves.toMatchObject({ z: null });
  });
});
