export type DocumentFormat = 'pdf' | 'excel';
/** Free-quota documents carry a watermark; credit documents do not. */
export type Billing = 'free' | 'credit';
