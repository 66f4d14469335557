export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const JOB_STATUSES: JobStatus[] = ['queued', 'processing', 'completed', 'failed', 'cancelled'];
export const OPEN_JOB_STATUSES: JobStatus[] = ['queued', 'processing'];
export type DocumentFormat = 'pdf' | 'excel';
/** Free-quota documents carry a watermark; credit documents do not. */
export type Billing = 'free' | 'credit';
