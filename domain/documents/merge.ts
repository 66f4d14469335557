/**
 * Merged documents (POST /api/documents/merge; docs/documents.md "Merging and appended PDFs"):
 * names shared by the API that accepts a merge and the activity that makes it.
 */

/** What every part's first bytes are: uploads are refused at once without it (ERR_OUTPUT_003). */
export const PDF_MAGIC = '%PDF-';

/** Where an uploaded part of a merge is kept until its merge ends (the merge job's workflow removes it). */
export const mergeUploadKey = (projectId: string, jobId: string, upload: number) => `merge-uploads/${projectId}/${jobId}/${upload}.pdf`;
