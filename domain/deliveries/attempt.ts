/** One attempt of a delivery, as the one delivery loop (workflows/deliveries/delivery-loop.ts) asks its kind's activity for it. */
export interface DeliveryAttemptInput {
  deliveryId: string;
  /** 1-based position in this workflow's schedule (logs and history only; records count every attempt). */
  attempt: number;
  /** The wait before the next automatic attempt should this one fail in a retryable way; absent on the last, which then fails the delivery. */
  retryInMs?: number;
}

/** What one attempt tells the loop (svix-style: returned, never thrown). */
export interface DeliveryAttemptResult {
  outcome: 'delivered' | 'retry' | 'permanent';
  /** A 429's Retry-After (report deliveries), when longer than the scheduled wait. */
  retryAfterMs?: number;
  statusCode?: number;
  error?: string;
}
