import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ExcelJS from 'exceljs';
import { startTestApp, type TestApp } from '../../support/app';
import { createKey } from '../../support/api-keys';
import { signUp, type SignedUpUser } from '../../support/factories';
import { pdfPixels, pdfText, solidPng } from '../../support/rendering-pdf';
import { createTeam, inTeam } from '../../support/teams';

const run = promisify(execFile);

/** Fonts no system font stack here has (bwip-js ships them): a PDF that embeds them got them from the upload. */
const OCRB_TTF = join(__dirname, '../../../node_modules/bwip-js/fonts/OCRB7.ttf');
const INCONSOLATA_OTF = join(__dirname, '../../../node_modules/bwip-js/fonts/Inconsolata.otf');

/** The fonts `pdffonts` lists for a PDF: `name type` (names without the subset prefix; Chromium draws CFF fonts as nameless Type 3). */
async function pdfFonts(pdf: Buffer): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'formwork-fonts-'));
  try {
    await writeFile(join(dir, 'doc.pdf'), pdf);
    const { stdout } = await run('/usr/bin/pdffonts', [join(dir, 'doc.pdf')]);
    return stdout
      .split('\n')
      .slice(2)
      .filter(Boolean)
      .map((line) => {
        const [name, ...rest] = line.split(/\s+/);
        return `${name.replace(/^[A-Z]{6}\+/, '')} ${rest.slice(0, 2).join(' ')}`;
      });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Assets (docs/templates.md "Assets and fonts", "Assets"): a project's images and fonts, uploaded as
 * multipart, judged by their bytes, used by its templates by `asset:<id>` or by family name, embedded
 * in the PDF, carried by exports, and never visible to another project.
 */
describe('Assets: images and fonts a project uploads and its templates use', () => {
  let app: TestApp;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let red: Buffer;
  beforeAll(async () => {
    app = await startTestApp({ env: { ASSET_PROJECT_MAX_COUNT: '12', ASSET_PROJECT_MAX_BYTES: String(3 * 1024 * 1024) } });
    alice = await signUp(app, { verified: true });
    bob = await signUp(app, { verified: true });
    // A solid red square: found again by its colour on the rendered page.
    red = solidPng(64, 64, [255, 0, 0]);
  });
  afterAll(() => app.close());

  async function upload(token: string, file: Buffer | string | undefined, filename = 'file.bin', fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const form = new FormData();
    if (file !== undefined) form.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)]), filename);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${app.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: form });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  }

  async function preview(token: string, templateId: string, format: 'pdf' | 'excel' = 'pdf', variables: Record<string, unknown> = {}): Promise<Buffer> {
    const res = await fetch(`${app.url}/api/templates/${templateId}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ format, variables }),
    });
    if (res.status !== 200) throw new Error(`preview ${res.status}: ${await res.text()}`);
    return Buffer.from(await res.arrayBuffer());
  }

  const templateWith = (name: string, schema: Record<string, unknown>) => ({
    name,
    outputFormats: ['pdf', 'excel'],
    schema: { pageSize: 'A4', ...schema },
    variables: [],
  });

  it('stores an image and a font judged by their bytes, lists, reads and serves them to the project only', async () => {
    const png = await upload(alice.accessToken, red, 'photo.jpg');
    expect(png.status).toBe(201);
    expect(png.body).toMatchObject({ kind: 'image', mediaType: 'image/png', name: 'photo.jpg', sizeBytes: red.length, reference: `asset:${png.body.id}` });
    expect(png.body.width).toBeGreaterThan(0);

    const font = await upload(alice.accessToken, await readFile(OCRB_TTF), 'ocrb.ttf', { name: 'OCR-B for cheques' });
    expect(font.status).toBe(201);
    expect(font.body).toMatchObject({ kind: 'font', mediaType: 'font/ttf', name: 'OCR-B for cheques', fontFamily: 'OCRB', width: null });

    const list = await app.request('GET', '/api/assets?kind=font', { token: alice.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: any) => a.id)).toEqual([font.body.id]);
    expect(list.body.meta).toMatchObject({ total: 1, page: 1 });

    const content = await fetch(`${app.url}/api/assets/${png.body.id}/content`, { headers: { authorization: `Bearer ${alice.accessToken}` } });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(content.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await content.arrayBuffer()).equals(red)).toBe(true);

    // An API key with read_templates reads; it cannot upload.
    const key = await createKey(app, alice.accessToken, { name: 'reader', permissions: { read_templates: true } });
    expect((await app.request('GET', `/api/assets/${png.body.id}`, { token: key.plainKey })).status).toBe(200);
    expect((await upload(key.plainKey, red, 'x.png')).status).toBe(403);

    // Bob's project sees none of it.
    for (const path of [`/api/assets/${png.body.id}`, `/api/assets/${png.body.id}/content`]) {
      const res = await app.request('GET', path, { token: bob.accessToken });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'ERR_ASSET_001' });
    }
    expect((await app.request('DELETE', `/api/assets/${png.body.id}`, { token: bob.accessToken })).status).toBe(404);
    expect((await app.request('GET', '/api/assets', { token: bob.accessToken })).body.data).toEqual([]);
  });

  it('refuses what is no image or font, a file too large while it streams, and a full project', async () => {
    const text = await upload(alice.accessToken, 'just some text', 'logo.png');
    expect(text.status).toBe(400);
    expect(text.body).toMatchObject({ code: 'ERR_ASSET_002', relatedInfo: { field: 'file' } });

    // A PNG renamed to .ttf is stored as the PNG it is; a "font" of random bytes is refused.
    const fakeFont = await upload(alice.accessToken, Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(4000, 7)]), 'font.ttf');
    expect(fakeFont.status).toBe(400);
    expect(fakeFont.body.code).toBe('ERR_ASSET_002');

    const none = await upload(alice.accessToken, undefined, undefined, { name: 'nothing' });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('ERR_ASSET_005');

    const huge = await upload(alice.accessToken, Buffer.alloc(40 * 1024 * 1024, 1), 'huge.png');
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('ERR_ASSET_003');

    // A team project fills up: 3 MB at most here.
    const team = await createTeam(app, bob);
    const big = Buffer.concat([red, Buffer.alloc(0)]);
    const font = await readFile(INCONSOLATA_OTF);
    let refused: any;
    for (let i = 0; i < 80 && !refused; i += 1) {
      const res = await upload(bob.accessToken, i % 2 ? big : font, `a${i}`, {}, inTeam(team.id));
      if (res.status !== 201) refused = res;
    }
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'ERR_ASSET_004' });
    expect(refused.body.relatedInfo.limit).toBeGreaterThan(0);
  });

  it('renders an image asset and uploaded fonts into the PDF (embedded), and the image into the workbook', async () => {
    const png = await upload(alice.accessToken, red, 'red.png');
    const font = await upload(alice.accessToken, await readFile(INCONSOLATA_OTF), 'inconsolata.otf');
    expect(font.body).toMatchObject({ kind: 'font', mediaType: 'font/otf', fontFamily: 'Inconsolata', fontWeight: 500 });
    expect((await upload(alice.accessToken, await readFile(OCRB_TTF), 'ocrb.ttf')).status).toBe(201);
    const created = await app.request('POST', '/api/templates', {
      token: alice.accessToken,
      body: templateWith('Branded', {
        // By family name for the whole page; by id (below) for one line.
        theme: { fontFamily: 'OCRB' },
        header: { components: [{ id: 'head-logo', type: 'image', props: { src: png.body.reference, width: '12mm', alt: 'header logo' } }] },
        sections: [
          {
            id: 'main',
            components: [
              { id: 'logo', type: 'image', props: { src: png.body.reference, width: '60mm', alt: 'Red square' } },
              { id: 'body', type: 'text', props: { text: 'Monospaced words' } },
              { id: 'code', type: 'text', props: { text: 'Monospaced line', style: { fontFamily: font.body.reference } } },
              { id: 'gone', type: 'image', props: { src: 'asset:00000000-0000-4000-8000-000000000000', alt: 'Missing picture' } },
            ],
          },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const pdf = await preview(alice.accessToken, created.body.id);
    const fonts = await pdfFonts(pdf);
    expect(fonts.some((f) => /^OCRB /.test(f))).toBe(true);
    // The OTF (CFF outlines) is embedded as drawn glyphs: a Type 3 font no plain page has.
    expect(fonts.filter((f) => / Type 3$/.test(f)).length).toBeGreaterThanOrEqual(1);
    const text = await pdfText(pdf);
    expect(text).toContain('Monospaced words');
    expect(text).toContain('Missing picture');
    // The red square is on the page (body) at 60 mm wide, and small in the header.
    const page = await pdfPixels(pdf, 1, 30);
    let reds = 0;
    for (let y = 0; y < page.height; y += 1) for (let x = 0; x < page.width; x += 1) {
      const [r, g, b] = page.rgb(x, y);
      if (r > 200 && g < 60 && b < 60) reds += 1;
    }
    expect(reds).toBeGreaterThan(200);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await preview(alice.accessToken, created.body.id, 'excel')) as unknown as ExcelJS.Buffer);
    expect(workbook.worksheets[0].getImages().length).toBeGreaterThanOrEqual(1);

    // Bob names Alice's asset: it is not his, so nothing of it is loaded.
    const stolen = await app.request('POST', '/api/templates', {
      token: bob.accessToken,
      body: templateWith('Borrowed', { sections: [{ id: 'main', components: [{ id: 'logo', type: 'image', props: { src: png.body.reference, alt: 'Not yours' } }] }] }),
    });
    const bobsPdf = await preview(bob.accessToken, stolen.body.id);
    expect(await pdfText(bobsPdf)).toContain('Not yours');
    expect((await pdfFonts(bobsPdf)).filter((f) => / Type 3$/.test(f))).toEqual([]);

    // Deleted: the template shows the alt text.
    expect((await app.request('DELETE', `/api/assets/${png.body.id}`, { token: alice.accessToken })).status).toBe(200);
    expect(await pdfText(await preview(alice.accessToken, created.body.id))).toContain('Red square');
  });

  it('cleans an SVG on upload and shows what is left', async () => {
    const svg = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100" viewBox="0 0 200 100" onload="alert(1)">
      <script>alert(2)</script><defs><linearGradient id="g"><stop offset="0" stop-color="#00ff00"/></linearGradient></defs>
      <rect width="200" height="100" fill="url(#g)"/><image href="https://evil.example/x.png" width="10" height="10"/>
      <rect width="10" height="10" fill="url(https://evil.example/p#a)"/></svg>`;
    const res = await upload(alice.accessToken, svg, 'drawing.svg');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'image', mediaType: 'image/svg+xml', width: 200, height: 100 });
    const stored = await (await fetch(`${app.url}/api/assets/${res.body.id}/content`, { headers: { authorization: `Bearer ${alice.accessToken}` } })).text();
    expect(stored).not.toMatch(/script|onload|evil\.example/i);
    expect(stored).toContain('viewBox');
    expect(stored).toContain('url(#g)');

    const created = await app.request('POST', '/api/templates', {
      token: alice.accessToken,
      body: templateWith('Green', { sections: [{ id: 'main', components: [{ id: 'pic', type: 'image', props: { src: res.body.reference, width: '100mm' } }] }] }),
    });
    const page = await pdfPixels(await preview(alice.accessToken, created.body.id), 1, 30);
    let greens = 0;
    for (let y = 0; y < page.height; y += 1) for (let x = 0; x < page.width; x += 1) {
      const [r, g, b] = page.rgb(x, y);
      if (g > 200 && r < 60 && b < 60) greens += 1;
    }
    expect(greens).toBeGreaterThan(200);
  });

  it('loads each example by name; the certificate brings its font as assets and prints in it', async () => {
    const carol = await signUp(app, { verified: true });
    const list = await app.request('GET', '/api/templates/examples', { token: carol.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.key)).toEqual(['invoice', 'quote', 'report', 'certificate']);
    const loaded: Record<string, any> = {};
    for (const key of ['invoice', 'quote', 'report', 'certificate']) {
      const res = await app.request('POST', `/api/templates/examples/${key}`, { token: carol.accessToken });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'created', templateId: expect.any(String) });
      loaded[key] = res.body;
    }
    const fonts = (await app.request('GET', '/api/assets?kind=font', { token: carol.accessToken })).body.data;
    expect(fonts.map((f: any) => [f.fontFamily, f.fontWeight, f.mediaType]).sort()).toEqual([
      ['Playfair Display', 400, 'font/woff2'],
      ['Playfair Display', 700, 'font/woff2'],
    ]);
    const pdf = await preview(carol.accessToken, loaded.certificate.templateId, 'pdf', loaded.certificate.sampleData);
    expect((await pdfFonts(pdf)).filter((f) => /PlayfairDisplay/i.test(f)).length).toBeGreaterThanOrEqual(2);
    expect(await pdfText(pdf)).toContain('Katherine Johnson');
    for (const key of ['invoice', 'quote', 'report']) expect((await preview(carol.accessToken, loaded[key].templateId, 'pdf', loaded[key].sampleData)).length).toBeGreaterThan(1000);

    // Again: a renamed copy, the fonts reused; an unknown name is a 404.
    const again = await app.request('POST', '/api/templates/examples/certificate', { token: carol.accessToken });
    expect(again.body.message).toContain('(2)');
    expect((await app.request('GET', '/api/assets?kind=font', { token: carol.accessToken })).body.meta.total).toBe(2);
    const unknown = await app.request('POST', '/api/templates/examples/menu', { token: carol.accessToken });
    expect(unknown.status).toBe(404);
  });

  it('carries the assets in an export; an import elsewhere renders the same, reusing what the project holds', async () => {
    // A project of its own: every OCRB face of the project would travel with the template.
    const dave = await signUp(app, { verified: true });
    const png = await upload(dave.accessToken, red, 'carried.png');
    const font = await upload(dave.accessToken, await readFile(OCRB_TTF), 'ocrb.ttf');
    const created = await app.request('POST', '/api/templates', {
      token: dave.accessToken,
      body: templateWith('Carried', {
        theme: { fontFamily: 'OCRB' },
        sections: [{ id: 'main', components: [{ id: 'logo', type: 'image', props: { src: png.body.reference, width: '50mm', alt: 'carried logo' } }, { id: 't', type: 'text', props: { text: 'Carried text' } }] }],
      }),
    });
    const exported = await fetch(`${app.url}/api/templates/${created.body.id}/export`, { headers: { authorization: `Bearer ${dave.accessToken}` } });
    const file = JSON.parse(await exported.text());
    expect(file.assets.map((a: any) => a.ref).sort()).toEqual([png.body.reference, font.body.reference].sort());

    const importInto = async (token: string) => {
      const form = new FormData();
      form.append('file', new Blob([JSON.stringify(file)]), 'carried.json');
      const res = await fetch(`${app.url}/api/templates/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const imported = await importInto(bob.accessToken);
    expect(imported.status).toBe(201);
    const bobsAssets = (await app.request('GET', '/api/assets', { token: bob.accessToken })).body.data;
    const bobsPng = bobsAssets.find((a: any) => a.sha256 === png.body.sha256);
    expect(bobsPng).toBeDefined();
    expect(bobsPng.id).not.toBe(png.body.id);
    const template = await app.request('GET', `/api/templates/${imported.body.templateId}`, { token: bob.accessToken });
    expect(JSON.stringify(template.body.schema)).toContain(`asset:${bobsPng.id}`);
    const pdf = await preview(bob.accessToken, imported.body.templateId);
    expect((await pdfFonts(pdf)).some((f) => /OCRB/i.test(f))).toBe(true);
    expect(await pdfText(pdf)).not.toContain('carried logo');

    // A second import reuses Bob's copies instead of storing them again.
    const before = (await app.request('GET', '/api/assets', { token: bob.accessToken })).body.meta.total;
    expect((await importInto(bob.accessToken)).status).toBe(201);
    expect((await app.request('GET', '/api/assets', { token: bob.accessToken })).body.meta.total).toBe(before);

    // A file whose asset is not an image or font fails whole, storing nothing.
    file.assets[0].data = Buffer.from('not a picture').toString('base64');
    file.name = 'Broken carried';
    const broken = await importInto(bob.accessToken);
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('ERR_ASSET_002');
    expect((await app.request('GET', '/api/assets', { token: bob.accessToken })).body.meta.total).toBe(before);
  });
});
