export type DocumentFormat = 'pdf' | 'excel' | 'png';
/** Free-quota documents carry a watermark; credit documents do not. */
export type Billing = 'free' | 'credit';

/** What a job makes: a render of a template version, or a merge of PDFs (POST /api/documents/merge). */
export type JobKind = 'render' | 'merge';

/**
 * One part of a merge job, as stored with it: another job of the project (its file is read when
 * the merge runs) or an uploaded PDF kept under `key` until the merge ends. `title` is its bookmark.
 */
export type MergePartRecord = { title: string } & ({ jobId: string } | { upload: number; key: string });
