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
});
