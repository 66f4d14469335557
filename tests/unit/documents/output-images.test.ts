import { checkImageBounds, IMAGE_MAX_PAGE_PIXELS, IMAGE_MAX_PIXELS, pagePixels, parsePageSizes, planRuns } from '../../../adapters/rendering/pdf-tools/image-bounds';
import { qpdfEncryptionJob } from '../../../adapters/rendering/pdf-tools/encryption-job';
import { checkOutput } from '../../../domain/documents/output';

describe('PNG pages: sizes, bounds and runs (pdf-tools/images.ts)', () => {
  const A4 = { width: 595.28, height: 841.89 };

  it('a page is its size in points × dpi / 72, rounded up as pdftoppm does: A4 at 150 dpi is 1241 × 1754', () => {
    expect(pagePixels(A4, 150)).toEqual({ width: 1241, height: 1754 });
    expect(pagePixels(A4, 72)).toEqual({ width: 596, height: 842 });
    expect(pagePixels({ width: 612, height: 792 }, 600)).toEqual({ width: 5100, height: 6600 });
  });

  it('reads the page sizes pdfinfo prints, in page order', () => {
    const out = ['Pages:           2', 'Page    1 size:  595.28 x 841.89 pts (A4)', 'Page    1 rot:   0', 'Page    2 size:  612 x 792 pts (letter)', 'Page    2 rot:   90'].join('\n');
    expect(parsePageSizes(out)).toEqual([A4, { width: 612, height: 792 }]);
    expect(parsePageSizes('Syntax Error')).toEqual([]);
  });

  it('refuses more pixels than the bounds with ERR_OUTPUT_007: in all, or on one page', () => {
    const a4at600 = pagePixels(A4, 600);
    const one = a4at600.width * a4at600.height;
    expect(() => checkImageBounds(Array(8).fill(one), 600)).not.toThrow();
    expect(() => checkImageBounds(Array(200).fill(one), 600)).toThrow(expect.objectContaining({ code: 'ERR_OUTPUT_007', relatedInfo: expect.objectContaining({ field: 'output.image', limit: IMAGE_MAX_PIXELS, pages: 200 }) }));
    expect(() => checkImageBounds([IMAGE_MAX_PAGE_PIXELS + 1], 600)).toThrow(expect.objectContaining({ code: 'ERR_OUTPUT_007', relatedInfo: expect.objectContaining({ field: 'output.image.dpi' }) }));
  });

  it('draws pages in runs of at most the run budget, a larger page alone', () => {
    expect(planRuns([40, 40, 40, 150, 10], 100)).toEqual([
      { first: 1, last: 2 },
      { first: 3, last: 3 },
      { first: 4, last: 4 },
      { first: 5, last: 5 },
    ]);
    expect(planRuns([10, 10, 10], 100)).toEqual([{ first: 1, last: 3 }]);
  });
});

describe('Encryption job (pdf-tools/encrypt.ts)', () => {
  it('asks qpdf for AES-256 with the permissions as flags; defaults print only', () => {
    expect(qpdfEncryptionJob({ userPassword: 'u', ownerPassword: 'o', permissions: { print: false, copy: true, modify: true } }, '/d/in.pdf', '/d/out.pdf')).toEqual({
      inputFile: '/d/in.pdf',
      outputFile: '/d/out.pdf',
      encrypt: { userPassword: 'u', ownerPassword: 'o', '256bit': { print: 'none', extract: 'y', modify: 'all' } },
    });
    expect(qpdfEncryptionJob({ ownerPassword: 'o' }, 'i', 'o').encrypt).toEqual({ userPassword: '', ownerPassword: 'o', '256bit': { print: 'full', extract: 'n', modify: 'none' } });
  });
});

describe('checkOutput with format "png"', () => {
  it.each(['pdfa', 'signature', 'encryption', 'attachments', 'facturx'] as const)('refuses output.%s (a PNG is drawn from the PDF)', (field) => {
    const values = { pdfa: '3b', signature: { certificateId: 'x' }, encryption: { ownerPassword: 'o' }, attachments: [], facturx: { profile: 'EN16931' } };
    expect(() => checkOutput('png', { [field]: values[field] } as never)).toThrow(expect.objectContaining({ code: 'ERR_VALID_001', relatedInfo: { field: `output.${field}` } }));
  });

  it('accepts image options with png only', () => {
    expect(() => checkOutput('png', { image: { dpi: 300, pages: 'all' } })).not.toThrow();
    expect(() => checkOutput('pdf', { image: { dpi: 300 } })).toThrow(expect.objectContaining({ relatedInfo: { field: 'output.image' } }));
  });

  it('refuses the same user and owner password; an empty user password with any owner password is fine', () => {
    expect(() => checkOutput('pdf', { encryption: { userPassword: 'same', ownerPassword: 'same' } })).toThrow(expect.objectContaining({ relatedInfo: { field: 'output.encryption.ownerPassword' } }));
    expect(() => checkOutput('pdf', { encryption: { userPassword: '', ownerPassword: 'o' } })).not.toThrow();
  });
});
