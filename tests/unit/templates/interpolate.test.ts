import { escapeHtml, getPath, interpolateHtml, interpolateText, parsePath, resolveTyped } from '../../../domain/templates/interpolate';

describe('interpolation', () => {
  const scope = {
    name: 'Zoë',
    total: 1234.5,
    items: [{ name: 'first' }, { name: 'second' }],
    nested: { deep: { value: 42 } },
    when: new Date('2024-03-01T00:00:00Z'),
    html: '<script>alert(1)</script> & "quotes"',
  };

  it('parses dotted and bracketed paths alike', () => {
    expect(parsePath('items.0.name')).toEqual(['items', '0', 'name']);
    expect(parsePath('items[1].name')).toEqual(['items', '1', 'name']);
    expect(getPath(scope, 'items[1].name')).toBe('second');
    expect(getPath(scope, 'items.0.name')).toBe('first');
    expect(getPath(scope, 'items.length')).toBe(2);
    expect(getPath(scope, 'nested.deep.value')).toBe(42);
  });

  it('reads own properties only, never prototypes', () => {
    expect(getPath(scope, 'constructor')).toBeUndefined();
    expect(getPath(scope, 'name.length')).toBeUndefined();
    expect(getPath(scope, '__proto__.toString')).toBeUndefined();
    expect(interpolateText('{{constructor.name}}', scope)).toBe('');
  });

  it('substitutes values, empty for missing, with optional formats', () => {
    expect(interpolateText('Hi {{ name }}, item {{items[1].name}} / {{missing}}!', scope)).toBe('Hi Zoë, item second / !');
    expect(interpolateText('{{total | currency}}', scope)).toBe('$1,234.50');
    expect(interpolateText('{{when}} / {{when | date}}', scope)).toBe('2024-03-01 / Mar 1, 2024');
    expect(interpolateText('{{total | percent}}', { total: 0.125 })).toBe('12.5%');
  });

  it('escapes substituted values and template text in HTML', () => {
    const out = interpolateHtml('<b>{{html}}</b>', scope);
    expect(out).toBe('&lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;&lt;/b&gt;');
    expect(out).not.toMatch(/<script/);
    expect(escapeHtml(`'`)).toBe('&#39;');
  });

  it('keeps the type of a lone placeholder', () => {
    expect(resolveTyped('{{total}}', scope)).toEqual({ value: 1234.5, format: undefined });
    expect(resolveTyped('{{ total | currency }}', scope)).toEqual({ value: 1234.5, format: 'currency' });
    expect(resolveTyped('Total {{total}}', scope)).toEqual({ value: 'Total 1234.5' });
    expect(resolveTyped(7, scope)).toEqual({ value: 7 });
  });
});
