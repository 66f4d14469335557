import { buildHtml, headerFooterSlot } from '../../../domain/templates/build-html';
import { resolveVariables } from '../../../domain/templates/variables';
import { isAllowedImageSource } from '../../../domain/templates/image-hosts';
import { DEFAULT_FORMAT_OPTIONS } from '../../../domain/templates/format';
import { buildInvoiceTemplate, buildTemplate, component, invoiceVariables } from '../../support/rendering-fixtures';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('buildHtml', () => {
  it('renders the invoice: headings, formatted key values and table cells', async () => {
    const t = buildInvoiceTemplate();
    const doc = await buildHtml(t.schema, await resolveVariables(t, invoiceVariables()));
    expect(doc.html).toContain('<h1 class="fw-heading">Invoice for Ada Lovelace</h1>');
    expect(doc.html).toContain('<td>€2,526.00</td>');
    expect(doc.html).toContain('<td class="fw-num">€1,250.50</td>');
    expect(doc.html).toContain('<td>Feb 20, 2024</td>');
    expect(doc.html).toContain('<td>Yes</td>');
    expect(doc.footerTemplate).toContain('<span class="pageNumber"></span> of <span class="totalPages"></span>');
    expect(doc.footerTemplate).toContain('Formwork GmbH');
    expect(doc).toMatchObject({ pageSize: 'A4', landscape: false, displayHeaderFooter: true });
  });

  it('keeps {{page}} a variable and escapes header text', () => {
    expect(headerFooterSlot('{{page}} | {page}/{pages} <b>', { page: 'cover' }, DEFAULT_FORMAT_OPTIONS)).toBe(
      'cover | <span class="pageNumber"></span>/<span class="totalPages"></span> &lt;b&gt;',
    );
  });

  it('escapes markup in variable values everywhere', async () => {
    const evil = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>';
    const t = buildTemplate({
      components: [
        component('heading', { text: '{{v}}', level: 2 }),
        component('text', { text: '{{v}}' }),
        component('list', { items: 'rows', field: 'v' }),
        component('table', { dataSource: 'rows', columns: [{ header: '{{v}}', field: 'v' }] }),
        component('keyValue', { items: [{ label: '{{v}}', value: '{{v}}' }] }),
      ],
    });
    const doc = await buildHtml(t.schema, { v: evil, rows: [{ v: evil }] });
    expect(doc.html).not.toMatch(/<script|<img/);
    expect(doc.html.match(/&lt;script&gt;/g)).toHaveLength(7); // heading, text, list, th, td, label, value
  });

  it('renders every catalogue component', async () => {
    const t = buildTemplate({
      components: [
        component('image', { src: PNG, width: '20mm', alt: 'logo' }),
        component('list', { items: ['one', '{{n}}'], ordered: true }),
        component('divider', {}),
        component('spacer', { height: 12 }),
        component('pageBreak', {}),
        component('qrcode', { value: 'https://example.com/{{n}}' }),
        component('repeat', { dataSource: 'groups', as: 'g', components: [component('text', { text: '{{loop.number}}. {{g.name}}' })] }),
      ],
    });
    const { html } = await buildHtml(t.schema, { n: 7, groups: [{ name: 'A' }, { name: 'B' }] });
    expect(html).toContain(`<img class="fw-image" src="${PNG}" alt="logo" style="width:20mm">`);
    expect(html).toContain('<ol class="fw-list"><li>one</li><li>7</li></ol>');
    expect(html).toContain('<hr class="fw-divider">');
    expect(html).toContain('style="height:12mm"');
    expect(html).toContain('<div class="fw-page-break"></div>');
    expect(html).toMatch(/<img class="fw-qrcode" src="data:image\/png;base64,[A-Za-z0-9+/=]+" alt="https:\/\/example.com\/7"/);
    expect(html).toContain('<p class="fw-text">1. A</p>');
    expect(html).toContain('<p class="fw-text">2. B</p>');
  });

  it('drops images from hosts that are not allow-listed, and keeps allow-listed ones', async () => {
    const t = buildTemplate({ components: [component('image', { src: '{{logo}}', alt: 'Logo' })] });
    const blocked = await buildHtml(t.schema, { logo: 'http://127.0.0.1:9/x.png' });
    expect(blocked.html).not.toContain('127.0.0.1');
    expect(blocked.html).toContain('<div class="fw-image-missing">Logo</div>');
    const allowed = await buildHtml(t.schema, { logo: 'https://cdn.example.com/x.png' }, { imageAllowlist: ['*.example.com'] });
    expect(allowed.html).toContain('<img class="fw-image" src="https://cdn.example.com/x.png"');
    expect(allowed.html).toContain('img-src data: https://assets.formwork.invalid http://*.example.com https://*.example.com; font-src https://assets.formwork.invalid;');
  });

  it('matches image hosts exactly, by wildcard or with a port', () => {
    expect(isAllowedImageSource('https://a.example.com/x', ['*.example.com'])).toBe(true);
    expect(isAllowedImageSource('https://example.com.evil.io/x', ['example.com'])).toBe(false);
    expect(isAllowedImageSource('https://evilexample.com/x', ['*.example.com'])).toBe(false);
    expect(isAllowedImageSource('http://127.0.0.1:8080/x', ['127.0.0.1:8080'])).toBe(true);
    expect(isAllowedImageSource('http://127.0.0.1:8081/x', ['127.0.0.1:8080'])).toBe(false);
    expect(isAllowedImageSource('http://user:pw@example.com/x', ['example.com'])).toBe(false);
    expect(isAllowedImageSource('file:///etc/passwd', ['example.com'])).toBe(false);
  });

  it('prints the watermark only when asked', async () => {
    const t = buildTemplate({ components: [component('text', { text: 'x' })] });
    expect((await buildHtml(t.schema, {})).html).not.toContain('fw-watermark"');
    expect((await buildHtml(t.schema, {}, { watermark: true })).html).toContain('<div class="fw-watermark">FORMWORK FREE</div>');
  });
});

describe('loop iteration limit', () => {
  const nested = buildTemplate({
    components: [
      component('repeat', {
        dataSource: 'outer',
        as: 'o',
        components: [component('table', { dataSource: 'o.rows', columns: [{ header: 'n', field: 'n' }] }, 'inner-table')],
      }, 'outer-loop'),
    ],
  });
  const data = (outer: number, rows: number) => ({
    outer: Array.from({ length: outer }, () => ({ rows: Array.from({ length: rows }, (_, n) => ({ n })) })),
  });

  it('counts iterations across nested loops and stops with ERR_LIMIT_007', async () => {
    await expect(buildHtml(nested.schema, data(10, 9), { limits: { maxLoopIterations: 100 } })).resolves.toBeDefined();
    await expect(buildHtml(nested.schema, data(10, 10), { limits: { maxLoopIterations: 100 } })).rejects.toMatchObject({
      code: 'ERR_LIMIT_007',
      relatedInfo: { limit: 100, componentId: 'inner-table' },
    });
  });

  it('fails fast on one oversized array', async () => {
    const t = buildTemplate({ components: [component('list', { items: 'xs' }, 'big')] });
    await expect(buildHtml(t.schema, { xs: new Array(10_001).fill('x') })).rejects.toMatchObject({ code: 'ERR_LIMIT_007' });
  });
});
