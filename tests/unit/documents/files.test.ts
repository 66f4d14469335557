import { downloadName } from '../../../domain/documents/files';

describe('downloadName: the name a download is saved under', () => {
  const jobId = '6f0c1f8e-0000-4000-8000-000000000001';

  it.each([
    ['a', 'pdf', 'a.pdf'],
    ['a.pdf', 'pdf', 'a.pdf'],
    ['A.PDF', 'pdf', 'A.PDF'],
    ['report.xlsx', 'excel', 'report.xlsx'],
    ['report', 'excel', 'report.xlsx'],
    // Another format's extension, or the extension alone, is part of the name.
    ['notes.xlsx', 'pdf', 'notes.xlsx.pdf'],
    ['a.pdf', 'excel', 'a.pdf.xlsx'],
    ['.pdf', 'pdf', '.pdf.pdf'],
    ['a.pdf.', 'pdf', 'a.pdf..pdf'],
    ['apdf', 'pdf', 'apdf.pdf'],
  ] as const)('%s as %s is %s', (filename, format, expected) => {
    expect(downloadName(filename, jobId, format)).toBe(expected);
  });

  it('names a download without a filename after the job', () => {
    expect(downloadName(null, jobId, 'pdf')).toBe(`document-${jobId}.pdf`);
    expect(downloadName(null, jobId, 'excel')).toBe(`document-${jobId}.xlsx`);
  });

  it('follows the stored file of a png job: one PNG, or a ZIP of every page', () => {
    expect(downloadName('thumb', jobId, 'png', `documents/p/${jobId}.png`)).toBe('thumb.png');
    expect(downloadName('pages', jobId, 'png', `documents/p/${jobId}.zip`)).toBe('pages.zip');
    expect(downloadName('pages.ZIP', jobId, 'png', `documents/p/${jobId}.zip`)).toBe('pages.ZIP');
    expect(downloadName(null, jobId, 'png', `documents/p/${jobId}.zip`)).toBe(`document-${jobId}.zip`);
    // A key of no known kind: the format's extension.
    expect(downloadName('a', jobId, 'pdf', 'documents/p/odd.bin')).toBe('a.pdf');
    expect(downloadName('a', jobId, 'png', null)).toBe('a.png');
  });
});
