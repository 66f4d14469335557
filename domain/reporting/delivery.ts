/**
 * Report delivery rules (docs/reporting.md "Deliveries", "Statuses"). Pure and free
 * of Node built-ins: the workflow bundle imports it too.
 */

export type ReportDeliveryStatus = 'pending' | 'delivering' | 'completed' | 'failed' | 'skipped';

/** One attempt as the delivery record shows it (the webhook delivery record's shape). */
export interface ReportDeliveryAttempt {
  number: number;
  at: string;
  /** HTTP status of chat/webhook/WebDAV targets, SMTP reply code of e-mail; absent otherwise. */
  statusCode?: number;
  /** In our words; never a remote server's response body. */
  error: string | null;
  durationMs: number;
}

/** What one attempt tells the delivery workflow (svix-style: returned, never thrown). */
export type ReportAttemptOutcome = 'delivered' | 'retry' | 'permanent';
