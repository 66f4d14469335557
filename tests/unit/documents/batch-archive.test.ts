import { loadConfig } from '../../../domain/config';
import { archiveKey, checkArchiveRequest, entryName, presentArchive, uniqueEntryNames } from '../../../domain/documents/batch-archive';
import { AppError } from '../../../domain/errors';

describe('batch archives (domain/documents/batch-archive.ts)', () => {
  it('names each ZIP entry once, whatever the letter case, and never as a path', () => {
    const name = uniqueEntryNames();
    expect(['a.pdf', 'a.pdf', 'A.PDF', 'a (2).pdf', 'b', 'b'].map(name)).toEqual(['a.pdf', 'a (2).pdf', 'A (3).PDF', 'a (2) (2).pdf', 'b', 'b (2)']);
    expect(uniqueEntryNames()('../../etc/passwd')).toBe('__.._etc_passwd');
    expect(uniqueEntryNames()('..\\x.pdf')).toBe('__x.pdf');
  });

  it('gives an entry the extension of the stored file', () => {
    expect(entryName('invoice.pdf', 'documents/p/j.pdf')).toBe('invoice.pdf');
    // A PNG job of every page is stored as a ZIP of PNGs.
    expect(entryName('scan.png', 'documents/p/j.zip')).toBe('scan.zip');
    expect(entryName('v1.2 draft.pdf', 'documents/p/j.pdf')).toBe('v1.2 draft.pdf');
  });

  it('refuses at acceptance a merged PDF of other formats and more documents than BATCH_ARCHIVE_MAX_DOCUMENTS', () => {
    expect(() => checkArchiveRequest('pdf', { archive: 'zip' }, 10_000, 5000)).toThrow(expect.objectContaining({ code: 'ERR_OUTPUT_005', relatedInfo: { limit: 5000, field: 'output.archive' } }));
    expect(() => checkArchiveRequest('excel', { archive: 'pdf' }, 1, 5000)).toThrow(expect.objectContaining({ code: 'ERR_VALID_001', relatedInfo: { field: 'output.archive' } }));
    expect(() => checkArchiveRequest('excel', { archive: 'zip' }, 5000, 5000)).not.toThrow();
    expect(() => checkArchiveRequest('pdf', undefined, 10_000, 1)).not.toThrow();
    expect(() => checkArchiveRequest('pdf', { archive: 'zip' }, 2, 1)).toThrow(AppError);
  });

  it('keeps archives per project and batch, and shows the archive only when one was asked for', () => {
    expect(archiveKey('p1', 'b1', 'zip')).toBe('archives/p1/b1.zip');
    expect(presentArchive({ output: null, archiveStatus: null })).toBeUndefined();
    expect(presentArchive({ output: { archive: 'pdf' }, archiveStatus: 'pending' })).toEqual({ format: 'pdf', status: 'pending' });
    expect(JSON.parse(JSON.stringify(presentArchive({ output: { archive: 'zip' }, archiveStatus: 'failed', archiveSize: 9, archiveErrorCode: 'ERR_OUTPUT_005', archiveError: 'too large' })))).toEqual({
      format: 'zip',
      status: 'failed',
      errorCode: 'ERR_OUTPUT_005',
      errorMessage: 'too large',
    });
  });

  it('reads its limits: documents default to BATCH_MAX_DOCUMENTS, bytes to 2 GiB', () => {
    expect(loadConfig({}).documents.archive).toEqual({ maxDocuments: 5000, maxBytes: 2 * 1024 ** 3 });
    expect(loadConfig({ BATCH_MAX_DOCUMENTS: '800' }).documents.archive.maxDocuments).toBe(800);
    expect(loadConfig({ BATCH_MAX_DOCUMENTS: '800', BATCH_ARCHIVE_MAX_DOCUMENTS: '50', BATCH_ARCHIVE_MAX_BYTES: '4096' }).documents.archive).toEqual({ maxDocuments: 50, maxBytes: 4096 });
  });
});
