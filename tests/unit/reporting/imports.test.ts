import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../../domain/errors';
import { parseJrxml } from '../../../domain/reporting/imports/jrxml';
import { parseMetabase } from '../../../domain/reporting/imports/metabase';
import { parseModelFile } from '../../../domain/reporting/imports/parse';
import { parseRedash, scheduleCron } from '../../../domain/reporting/imports/redash';
import { draftTemplateFor } from '../../../domain/reporting/imports/template';
import { makeZip } from '../../support/zip';

/**
 * The import parsers (docs/reporting.md "Imports") on sample files of each format, and
 * on hostile ones: entity bombs, zip bombs, thousands of parameters, huge strings.
 */
const fixture = (name: string) => readFileSync(join(__dirname, '../../fixtures/reporting-imports', name));
const caps = { maxEntries: 500, maxBytes: 50 * 1024 * 1024 };
const parse = (bytes: Buffer | string, format?: 'metabase' | 'redash' | 'jrxml') => parseModelFile(Buffer.from(bytes), caps, format);

async function refusal(p: Promise<unknown>): Promise<{ code: string; relatedInfo: unknown }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, relatedInfo: err.relatedInfo ?? null };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('Metabase cards', () => {
  it('reads a serialization YAML in the legacy shape: SQL, optional clauses kept, template tags as parameters', async () => {
    const { format, items } = await parse(fixture('metabase-legacy.yaml'));
    expect(format).toBe('metabase');
    expect(items).toEqual([
      {
        source: { type: 'card', name: 'Orders by status', ref: '8pX3kXq1A2b3C4d5E6f7G' },
        outcome: 'ok',
        datasourceRef: 'Sample Database',
        warnings: [],
        query: {
          name: 'Orders by status',
          description: 'Orders of one status since a date',
          text: 'SELECT id, status, total\nFROM orders\nWHERE status = {{status}}\n[[AND created_at >= {{since}}]]',
          parameters: [
            { name: 'status', type: 'string', label: 'Status', required: true, default: 'open' },
            { name: 'since', type: 'date', label: 'Since' },
          ],
          expectedColumns: null,
        },
      },
    ]);
  });

  it('reads an API card in the MBQL 5 stages shape (mbql.stage/native)', async () => {
    const { items } = await parse(fixture('metabase-stages.json'));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ outcome: 'ok', datasourceRef: '2', source: { type: 'card', name: 'Big customers', ref: '42' } });
    expect(items[0].query?.text).toBe('SELECT name, total FROM customers WHERE total > {{min_total}} [[AND region = {{region}}]]');
    expect(items[0].query?.parameters).toEqual([
      { name: 'min_total', type: 'number', label: 'Minimum total', default: 1000 },
      { name: 'region', type: 'string', label: 'Region' },
    ]);
  });

  it('flags field filters and card references (named), and leaves GUI questions and dashboards unsupported', async () => {
    const { items } = await parse(fixture('metabase-attention.json'));
    expect(items.map((i) => [i.source.name, i.outcome, i.warnings.map((w) => w.code)])).toEqual([
      ['Filtered by a field filter', 'needs_attention', ['FIELD_FILTER', 'CARD_REFERENCE']],
      ['GUI question', 'unsupported', ['GUI_QUESTION']],
    ]);
    expect(items[0].warnings[0].message).toContain("'created'");
    expect(items[0].query).toBeUndefined();
    const dash = parseMetabase({ name: 'Sales', dashcards: [] });
    expect(dash.map((i) => [i.outcome, i.warnings[0].code])).toEqual([['unsupported', 'DASHBOARD']]);
    const snippet = parseMetabase({ name: 's', dataset_query: { type: 'native', native: { query: 'SELECT {{snippet: x}}', 'template-tags': { 'snippet: x': { type: 'snippet' } } } } });
    expect(snippet[0].warnings.map((w) => w.code)).toEqual(['SNIPPET_REFERENCE']);
  });

  it('reads a zip of a serialization dump, leaving out entries that are not cards', async () => {
    const zip = makeZip([
      { name: 'collections/main/cards/orders.yaml', data: fixture('metabase-legacy.yaml') },
      { name: 'databases/Sample Database/Sample Database.yaml', data: 'name: Sample Database\nengine: h2\n' },
      { name: 'settings.yaml', data: 'site-name: Acme\n' },
      { name: '__MACOSX/._orders.yaml', data: '\u0000\u0005' },
    ]);
    const { format, items } = await parseModelFile(zip, caps);
    expect([format, items.map((i) => i.source.name)]).toEqual(['metabase', ['Orders by status']]);
  });
});

describe('Redash queries', () => {
  it('reads one query: placeholders normalised, quotes around them removed, a date range as two parameters, a schedule suggested', async () => {
    const { format, items } = await parse(fixture('redash-single.json'));
    expect(format).toBe('redash');
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(item.outcome).toBe('ok');
    expect(item.datasourceRef).toBe('1');
    expect(item.query?.text).toBe(
      'SELECT created_at::date AS day, count(*) AS n\nFROM users\nWHERE created_at >= {{period_start}} AND created_at < {{period_end}}\n  AND plan = {{Plan}}\nGROUP BY 1 ORDER BY 1',
    );
    expect(item.query?.parameters).toEqual([
      { name: 'period_start', type: 'date', required: true, label: 'Period (start)', default: '2024-01-01' },
      { name: 'period_end', type: 'date', required: true, label: 'Period (end)', default: '2024-02-01' },
      { name: 'Plan', type: 'string', required: true, label: 'Plan', options: ['free', 'pro', 'team'], default: 'pro' },
    ]);
    expect(item.suggestedSchedule).toEqual({ cron: '30 6 * * *', timezone: 'UTC' });
  });

  it('reads an array: a query-based dropdown becomes a multiple string with a warning; a YAML (JSON runner) query is unsupported', async () => {
    const { items } = await parse(fixture('redash-array.json'));
    expect(items.map((i) => [i.source.name, i.outcome])).toEqual([
      ['Orders over', 'ok'],
      ['API users', 'unsupported'],
    ]);
    expect(items[0].query?.parameters[1]).toEqual({ name: 'countries', type: 'string', required: true, label: 'Countries', multiple: true });
    expect(items[0].warnings.map((w) => w.code)).toEqual(['QUERY_PARAMETER']);
    expect(items[0].suggestedSchedule).toEqual({ cron: '0 8 * * 1', timezone: 'UTC' });
    expect(items[1].warnings.map((w) => w.code)).toEqual(['NOT_SQL']);
  });

  it('reads the API list shape {results: [...]}', async () => {
    const { items } = await parse(fixture('redash-list.json'));
    expect(items.map((i) => [i.source.name, i.outcome, i.query?.text])).toEqual([['All plans', 'ok', 'SELECT DISTINCT plan FROM users']]);
  });

  it('renames parameter names that are not identifiers, in the text too; an undefined placeholder needs attention', () => {
    const [item] = parseRedash({ name: 'q', data_source_id: 1, query: "SELECT * FROM t WHERE a = '{{ Start Date }}'", options: { parameters: [{ name: 'Start Date', type: 'date' }] } });
    expect(item.query?.text).toBe('SELECT * FROM t WHERE a = {{Start_Date}}');
    expect(item.warnings.map((w) => w.code)).toEqual(['PARAMETER_RENAMED']);
    const [missing] = parseRedash({ name: 'q', data_source_id: 1, query: 'SELECT {{ nope }}', options: {} });
    expect([missing.outcome, missing.warnings[0].code]).toEqual(['needs_attention', 'UNDEFINED_PARAMETER']);
  });

  it('turns Redash schedules into cron (minutes, hours, days, weeks), or none', () => {
    expect(scheduleCron({ interval: 900 })).toBe('*/15 * * * *');
    expect(scheduleCron({ interval: 60 })).toBe('*/5 * * * *');
    expect(scheduleCron({ interval: 7200 })).toBe('0 */2 * * *');
    expect(scheduleCron({ interval: 86400, time: '23:05' })).toBe('5 23 * * *');
    expect(scheduleCron({ interval: 604800, time: '08:00', day_of_week: 'Friday' })).toBe('0 8 * * 5');
    expect(scheduleCron('3600')).toBe('0 */1 * * *');
    expect(scheduleCron({ interval: 86400, time: '99:99' })).toBeNull();
    expect(scheduleCron({ interval: -1 })).toBeNull();
    expect(scheduleCron(null)).toBeNull();
  });
});

describe('JRXML reports', () => {
  it('reads JR 6 (queryString): $P{} and $X{} converted, classes typed, literal defaults, fields as expected columns', async () => {
    const { format, items } = await parse(fixture('jr6.jrxml'));
    expect(format).toBe('jrxml');
    expect(items).toHaveLength(1);
    const [item] = items;
    expect([item.outcome, item.source]).toEqual(['ok', { type: 'jrxml', name: 'Invoices', ref: '1d2c3b4a-0000-4000-8000-000000000006' }]);
    expect(item.query?.text).toBe(
      'SELECT id, customer_id, total, issued_on\nFROM invoices\nWHERE customer_id = {{CUSTOMER_ID}}\n  AND status IN ({{STATUSES}})\n  AND total >= {{MIN_TOTAL}}\n  AND issued_on >= {{FROM_DATE}}',
    );
    // TITLE feeds only the layout: it is left out.
    expect(item.query?.parameters).toEqual([
      { name: 'CUSTOMER_ID', type: 'integer', default: 7, required: false },
      { name: 'STATUSES', type: 'string', multiple: true, required: true },
      { name: 'FROM_DATE', type: 'date', required: true },
      { name: 'MIN_TOTAL', type: 'number', default: 100.5, required: false },
    ]);
    expect(item.query?.expectedColumns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'customer_id', type: 'integer' },
      { name: 'total', type: 'number' },
      { name: 'issued_on', type: 'date' },
    ]);
    expect(item.warnings.map((w) => w.code)).toEqual(['X_CLAUSE']);
  });

  it('reads JR 7 (query element, lower-case language, escaped text)', async () => {
    const { items } = await parse(fixture('jr7.jrxml'));
    expect(items[0].outcome).toBe('ok');
    expect(items[0].query?.text).toBe('SELECT id, warehouse, shipped_at FROM shipments WHERE warehouse = {{WAREHOUSE}} AND shipped_at > {{SHIPPED_AFTER}}');
    expect(items[0].query?.parameters).toEqual([
      { name: 'WAREHOUSE', type: 'string', default: 'north', required: false },
      { name: 'SHIPPED_AFTER', type: 'datetime', required: true },
    ]);
  });

  it('never converts $P!{} (text splicing): the item needs attention and has no query', async () => {
    const { items } = await parse(fixture('jr-splice.jrxml'));
    expect([items[0].outcome, items[0].query, items[0].warnings.map((w) => w.code)]).toEqual(['needs_attention', undefined, ['TEXT_SPLICING']]);
    expect(items[0].warnings[0].message).toContain('$P!{ORDER_BY}');
  });

  it('leaves other query languages unsupported, and converts the comparisons and BETWEEN forms of $X{}', async () => {
    const { items } = await parse(fixture('jr-xpath.jrxml'));
    expect([items[0].outcome, items[0].warnings[0].code]).toEqual(['unsupported', 'QUERY_LANGUAGE']);
    const xml = `<jasperReport name="X"><parameter name="a" class="java.lang.Integer"/><parameter name="b" class="java.lang.Integer"/>
      <queryString><![CDATA[SELECT 1 WHERE $X{NOTIN, c, a} AND $X{NOTEQUAL, c, a} AND $X{LESS], c, b} AND $X{[BETWEEN], c, a, b} AND $X{BETWEEN, c, a, b}]]></queryString></jasperReport>`;
    expect(parseJrxml(xml)[0].query?.text).toBe('SELECT 1 WHERE c NOT IN ({{a}}) AND c <> {{a}} AND c <= {{b}} AND (c >= {{a}} AND c <= {{b}}) AND (c > {{a}} AND c < {{b}})');
    const expression = `<jasperReport name="E"><parameter name="d" class="java.util.Date"><defaultValueExpression>new java.util.Date()</defaultValueExpression></parameter><queryString>SELECT $P{d}</queryString></jasperReport>`;
    const [e] = parseJrxml(expression);
    expect([e.query?.parameters, e.warnings.map((w) => w.code)]).toEqual([[{ name: 'd', type: 'date', required: true }], ['DEFAULT_NOT_LITERAL']]);
  });
});

describe('JRXML draft template', () => {
  it('has the name as heading (braces left out) and a table of the fields that are identifiers', () => {
    const t = draftTemplateFor('Sales {{x}}', [{ name: 'id', type: 'integer' }, { name: 'name', type: 'string' }, { name: 'bad name' }]);
    expect(t.schema).toEqual({
      pageSize: 'A4',
      sections: [
        {
          id: 'main',
          title: 'Sales x',
          components: [
            { id: 'title', type: 'heading', props: { text: 'Sales x', level: 1 } },
            { id: 'rows', type: 'table', props: { dataSource: 'rows', columns: [{ header: 'id', field: 'id', format: 'number' }, { header: 'name', field: 'name' }] } },
          ],
        },
      ],
    });
    expect(t.variables).toEqual([
      { name: 'rows', type: 'array', required: false, defaultValue: [], items: { type: 'object', properties: [{ name: 'id', type: 'number' }, { name: 'name', type: 'string' }] } },
    ]);
    expect(draftTemplateFor('{{}}', []).variables).toEqual([]);
  });
});

describe('format detection and hostile files', () => {
  it('answers ERR_IMP_002 for a file of no known model, ERR_IMP_003 for a broken one of the format asked', async () => {
    expect((await refusal(parse('name,total\na,1\n'))).code).toBe('ERR_IMP_002');
    expect((await refusal(parse('{"hello": "world"}'))).code).toBe('ERR_IMP_002');
    expect((await refusal(parse('<html><body/></html>'))).code).toBe('ERR_IMP_002');
    expect((await refusal(parse('{"hello": "world"}', 'redash'))).code).toBe('ERR_IMP_003');
    const broken = await refusal(parse('<jasperReport name="x"><queryString>SELECT 1</jasperReport>'));
    expect(broken.code).toBe('ERR_IMP_003');
    expect((broken.relatedInfo as { errors: unknown[] }).errors).toHaveLength(1);
    expect((await refusal(parse('{"name": "x", "dataset_query": '))).code).toBe('ERR_IMP_003');
  });

  it('refuses an XML entity bomb and an external entity (XXE) without expanding anything', async () => {
    const started = Date.now();
    for (const name of ['xml-bomb.jrxml', 'xxe.jrxml']) {
      const r = await refusal(parse(fixture(name)));
      expect([name, r.code, JSON.stringify(r.relatedInfo)]).toEqual([name, 'ERR_IMP_003', expect.stringContaining('entities are refused')]);
    }
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a YAML alias bomb (billion laughs) and nesting too deep', async () => {
    const r = await refusal(parse(fixture('yaml-bomb.yaml')));
    expect([r.code, JSON.stringify(r.relatedInfo)]).toEqual(['ERR_IMP_003', expect.stringContaining('alias')]);
    const deep = '['.repeat(200) + ']'.repeat(200);
    expect((await refusal(parse(deep, 'redash'))).code).toBe('ERR_IMP_003');
  });

  it('refuses a zip bomb by its caps: declared sizes, real inflated bytes, entry count', async () => {
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const honest = makeZip([{ name: 'card.json', data: zeros }]);
    expect(honest.length).toBeLessThan(1024 * 1024);
    const a = await refusal(parseModelFile(honest, caps));
    expect(a.code).toBe('ERR_IMP_004');
    // Headers that lie (declared 100 bytes): inflating stops at the cap or at the declared size.
    const liar = makeZip([{ name: 'card.json', data: zeros, declaredSize: 100 }]);
    expect(['ERR_IMP_003', 'ERR_IMP_004']).toContain((await refusal(parseModelFile(liar, caps))).code);
    const small = { maxEntries: 500, maxBytes: 1024 * 1024 };
    const liarUnderCap = makeZip([{ name: 'a.json', data: Buffer.alloc(2 * 1024 * 1024), declaredSize: 10 }]);
    expect(['ERR_IMP_003', 'ERR_IMP_004']).toContain((await refusal(parseModelFile(liarUnderCap, small))).code);
    const many = makeZip(Array.from({ length: 501 }, (_, i) => ({ name: `f${i}.txt`, data: 'x' })));
    expect(await refusal(parseModelFile(many, caps))).toEqual({ code: 'ERR_IMP_004', relatedInfo: expect.objectContaining({ maxEntries: 500 }) });
    expect((await refusal(parseModelFile(Buffer.from('PK\u0003\u0004garbage'), caps))).code).toBe('ERR_IMP_003');
  });

  it('bounds 10,000 parameters: the item needs attention instead of growing', () => {
    const tags = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { name: `p${i}`, type: 'text' }]));
    const [mb] = parseMetabase({ name: 'many', dataset_query: { type: 'native', native: { query: 'SELECT 1', 'template-tags': tags } } });
    expect([mb.outcome, mb.warnings.map((w) => w.code)]).toEqual(['needs_attention', ['TOO_MANY_PARAMETERS']]);
    const [rd] = parseRedash({ name: 'many', data_source_id: 1, query: 'SELECT 1', options: { parameters: Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i}`, type: 'text' })) } });
    expect(rd.outcome).toBe('needs_attention');
    const params = Array.from({ length: 10_000 }, (_, i) => `<parameter name="p${i}"/>`).join('');
    const [jr] = parseJrxml(`<jasperReport name="many">${params}<queryString>SELECT 1</queryString></jasperReport>`);
    expect([jr.outcome, jr.warnings.map((w) => w.code)]).toEqual(['needs_attention', ['TOO_MANY_PARAMETERS']]);
  });

  it('bounds huge strings: names and descriptions cut, an over-long query needs attention', () => {
    const long = 'x'.repeat(2_000_000);
    const [a] = parseRedash({ name: long, description: long, data_source_id: 1, query: 'SELECT 1' });
    expect([a.outcome, a.query?.name.length, a.query?.description?.length, a.warnings.map((w) => w.code)]).toEqual(['ok', 100, 1000, ['NAME_SHORTENED', 'DESCRIPTION_SHORTENED']]);
    const [b] = parseMetabase({ name: 'big', dataset_query: { type: 'native', native: { query: `SELECT '${long}'` } } });
    expect([b.outcome, b.warnings.map((w) => w.code)]).toEqual(['needs_attention', ['TEXT_TOO_LONG']]);
    const [c] = parseJrxml(`<jasperReport name="big"><queryString>SELECT '${long}'</queryString></jasperReport>`);
    expect(c.outcome).toBe('needs_attention');
    const [d] = parseRedash({ name: 'q', data_source_id: 1, query: `SELECT {{ ${'y'.repeat(5000)} }}`, options: {} });
    expect(d.outcome).toBe('ok');
  });
});
