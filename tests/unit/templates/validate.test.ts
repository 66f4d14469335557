import { validateTemplate, validateTemplateSchema, validateTemplateVariables } from '../../../domain/templates/template.schema';
import { buildInvoiceTemplate, buildTemplate, component } from '../../support/rendering-fixtures';

const paths = (issues: Array<{ path: string }>) => issues.map((i) => i.path);

describe('validateTemplateSchema', () => {
  it('accepts the invoice template without errors or warnings', () => {
    const t = buildInvoiceTemplate();
    expect(validateTemplate(t, 'pdf')).toEqual({ valid: true, errors: [], warnings: [] });
    expect(validateTemplateSchema(t.schema, 'excel')).toMatchObject({ valid: true, errors: [] });
  });

  it('reports structure problems with their paths', () => {
    const r = validateTemplateSchema({ pageSize: 'B5', sections: [{ components: [] }] }, 'pdf');
    expect(r.valid).toBe(false);
    expect(paths(r.errors)).toEqual(expect.arrayContaining(['pageSize', 'sections[0].id']));
    expect(validateTemplateSchema(null, 'pdf').valid).toBe(false);
    expect(validateTemplateSchema({ pageSize: 'A4', sections: [] }, 'word' as never).errors[0].path).toBe('templateType');
  });

  it('reports unknown component types and bad props, also inside repeats', () => {
    const t = buildTemplate({
      components: [
        component('heading', { text: 'x', level: 9 }, 'h'),
        { id: 'w', type: 'marquee' as never, props: {} },
        component('repeat', { dataSource: 'rows', components: [component('spacer', { height: 'calc(1px)' }, 's')] }, 'r'),
      ],
    });
    const r = validateTemplateSchema(t.schema, 'pdf');
    expect(r.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'sections[0].components[0].props.level' }),
        expect.objectContaining({ path: 'sections[0].components[1].type', message: expect.stringContaining("unknown component type 'marquee'") }),
        expect.objectContaining({ path: 'sections[0].components[2].props.components[0].props.height' }),
      ]),
    );
  });

  it('refuses a table whose dataSource names no array variable', () => {
    const t = buildTemplate({
      variables: [{ name: 'title', type: 'string', required: false }, { name: 'rows', type: 'array', required: false }],
      components: [
        component('table', { dataSource: 'title', columns: [{ header: 'A', field: 'a' }] }, 't1'),
        component('table', { dataSource: 'nothing', columns: [{ header: 'A', field: 'a' }] }, 't2'),
        component('table', { dataSource: 'rows', columns: [{ header: 'A', field: 'a' }] }, 't3'),
        component('text', { text: '{{title}}' }, 'x'),
      ],
    });
    const r = validateTemplate(t, 'pdf');
    expect(r.errors).toEqual([
      { path: 'schema.sections[0].components[0].props.dataSource', message: "'title' names a string variable, not an array" },
      { path: 'schema.sections[0].components[1].props.dataSource', message: "'nothing' names no array variable" },
    ]);
  });

  it('warns about unknown placeholders and unused variables, knowing loop bindings', () => {
    const t = buildTemplate({
      variables: [
        { name: 'rows', type: 'array', required: false },
        { name: 'unused', type: 'string', required: false },
        { name: 'rate', type: 'number', required: false },
      ],
      calculatedVariables: [{ name: 'double', expression: 'rate * 2' }],
      components: [
        component('repeat', { dataSource: 'rows', components: [component('text', { text: '{{item.name}} {{loop.number}}' }, 'in')] }, 'r'),
        component('text', { text: '{{typo}} {{double | money}}' }, 'out'),
      ],
    });
    const r = validateTemplate(t, 'pdf');
    expect(r.valid).toBe(true);
    expect(r.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([
        "{{typo}} refers to an unknown variable 'typo'",
        expect.stringContaining("unknown format 'money'"),
        "variable 'unused' is never used",
      ]),
    );
    expect(r.warnings).toHaveLength(3);
  });
});

describe('validateTemplateVariables', () => {
  it('accepts well-formed variables', () => {
    const t = buildInvoiceTemplate();
    expect(validateTemplateVariables(t)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it('refuses JSONata that does not parse, duplicates, bad types and defaults', () => {
    const r = validateTemplateVariables({
      variables: [
        { name: 'a', type: 'string', required: false },
        { name: 'a', type: 'number', required: false },
        { name: 'b', type: 'decimal', required: false },
        { name: 'c', type: 'integer', required: false, defaultValue: 'seven' },
        { name: 'bad-name', type: 'string', required: false },
      ],
      constants: { k: 1 },
      calculatedVariables: [
        { name: 'k', expression: '1' },
        { name: 'broken', expression: '$sum(items.(qty * ' },
      ],
    });
    expect(r.valid).toBe(false);
    expect(paths(r.errors)).toEqual(
      expect.arrayContaining([
        'variables[1]',
        'variables[2].type',
        'variables[3].defaultValue',
        'variables[4].name',
        'calculatedVariables[0]',
        'calculatedVariables[1].expression',
      ]),
    );
    expect(r.errors.find((e) => e.path === 'calculatedVariables[1].expression')?.message).toMatch(/JSONata does not parse/);
  });

  it('warns about a required variable that has a default', () => {
    const r = validateTemplateVariables({ variables: [{ name: 'x', type: 'string', required: true, defaultValue: 'y' }] });
    expect(r).toMatchObject({ valid: true, warnings: [{ path: 'variables[0].required' }] });
  });
});
