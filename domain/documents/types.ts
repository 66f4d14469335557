export type DocumentFormat = 'pdf' | 'excel' | 'png';
/** Free-quota documents carry a watermark; credit documents do not. */
export type Billing = 'free' | 'credit';
