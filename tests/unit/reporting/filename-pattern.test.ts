import { checkFilenamePattern, DEFAULT_FILENAME_PATTERN, parseFilenamePattern, renderFilename, sanitizeFilename } from '../../../domain/reporting/filename-pattern';

const values = {
  slug: 'monthly-sales',
  name: 'Monthly Sales',
  runShortId: 'rrun_abc123',
  // 23:30 UTC on the 31st is already the 1st in Berlin.
  scheduledFor: new Date('2026-01-31T23:30:00Z'),
  timezone: 'Europe/Berlin',
  params: { region: 'EMEA', ids: [1, 2], missing: null },
};

describe('filename patterns', () => {
  it('renders the default pattern with the date in the run zone', () => {
    expect(renderFilename(DEFAULT_FILENAME_PATTERN, values)).toBe('monthly-sales-2026-02-01');
    expect(renderFilename(DEFAULT_FILENAME_PATTERN, { ...values, timezone: 'UTC' })).toBe('monthly-sales-2026-01-31');
  });

  it('renders every token', () => {
    expect(renderFilename('{name}_{runShortId}_{scheduledFor:yyyyMMdd.HH-mm}_{param.region}_{param.ids}', values)).toBe('Monthly-Sales_rrun_abc123_20260201.00-30_EMEA_1-2');
    expect(renderFilename('{slug}{param.missing}', values)).toBe('monthly-sales');
  });

  it('sanitizes to [A-Za-z0-9._-], drops accents, no leading dot or dash, at most 120 characters', () => {
    expect(renderFilename('{param.region}', { ...values, params: { region: '../../etc/passwd' } })).toBe('etc-passwd');
    expect(renderFilename('Ümsätze {param.region}', { ...values, params: { region: 'Café / Bar?*' } })).toBe('Umsatze-Cafe-Bar');
    expect(renderFilename('{param.region}', { ...values, params: { region: 'a'.repeat(500) } })).toBe('a'.repeat(120));
    expect(renderFilename('{param.region}', { ...values, params: { region: '///' } })).toBe('report');
    expect(sanitizeFilename('.hidden\u0000name\r\n')).toBe('hidden-name');
    for (const s of ['x'.repeat(10_000), '😀'.repeat(300), '-.-.-', 'a b\tc']) expect(sanitizeFilename(s)).toMatch(/^[A-Za-z0-9._-]{1,120}$/);
  });

  it('refuses unknown tokens, bare or bad date patterns, unbalanced braces and unknown parameters', () => {
    expect(checkFilenamePattern(DEFAULT_FILENAME_PATTERN, [])).toEqual([]);
    expect(checkFilenamePattern('{slug}-{param.region}', ['region'])).toEqual([]);
    const bad = ['{slug', 'slug}', '{{slug}}', '{unknown}', '{scheduledFor}', '{scheduledFor:yyyy/MM}', '{scheduledFor:ss}', '{param.1x}', '', 'x'.repeat(201)];
    for (const pattern of bad) {
      const issues = checkFilenamePattern(pattern, ['region']);
      expect({ pattern, count: issues.length, path: issues[0]?.path }).toEqual({ pattern, count: 1, path: 'filenamePattern' });
    }
    expect(checkFilenamePattern('{param.other}', ['region'], 'p')).toEqual([{ path: 'p', message: '{param.other} names no parameter of the report' }]);
    expect(() => renderFilename('{nope}', values)).toThrow(/Invalid filename pattern/);
  });

  it('parses into parts', () => {
    expect(parseFilenamePattern('a{slug}b{scheduledFor:yyyy}')).toEqual({
      parts: [{ kind: 'text', text: 'a' }, { kind: 'slug' }, { kind: 'text', text: 'b' }, { kind: 'scheduledFor', format: 'yyyy' }],
    });
  });
});
