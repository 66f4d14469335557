import type { Readable } from 'node:stream';
import type { ChannelKind, ChannelTarget } from '../../domain/reporting/channel-kinds';
import type { ReportAttemptOutcome } from '../../domain/reporting/delivery';
import type { Mailer } from '../mail/mailer';
import type { OutboundGuard } from '../http/outbound';

/**
 * The port every channel kind implements (docs/reporting.md "Channels"). The delivery
 * activity (deliver-report.activity.ts) loads the delivery, its channel (secrets decrypted by row
 * id, never through Temporal) and the run's files, calls `send` once per attempt and records the
 * result; the workflow owns the retry schedule. A sender never throws for a target's failure: it
 * returns an outcome, and its `error` is in our words (a remote body is never stored).
 */

/** One stored output of the run (or of every run of a job run, for a bundle). */
export interface DeliveryFile {
  filename: string;
  format: 'pdf' | 'excel' | 'csv';
  contentType: string;
  bytes: number;
  /** A fresh stream of the stored file on every call. */
  open(): Promise<Readable>;
  /** Signed, expiring download link (REPORTING_LINK_TTL_HOURS). */
  url: string;
  expiresAt: string;
  /** The report this file belongs to (differs between files of a job's bundle). */
  reportName: string;
}

/** What is being delivered: a run, or a job run's bundle. */
export interface DeliveryMessage {
  /** `report.run.completed` or `report.job_run.completed` (webhook event type). */
  event: 'report.run.completed' | 'report.job_run.completed';
  /** Stable across every attempt of the delivery (webhook X-Service-Event-Id; mail Message-ID seed). */
  eventId: string;
  deliveryId: string;
  projectId: string;
  /** The report (for a job run: the job's name and id). */
  report: { id: string; name: string; slug: string | null };
  run: {
    id: string;
    shortId: string;
    /** The run's status when delivery began (`delivering`), or the job run's. */
    status: string;
    trigger: string;
    scheduledFor: string;
    timezone: string;
    /** The run's resolved report parameters (file-name pattern tokens `{param.<name>}`); empty for job runs. */
    parameters: Record<string, unknown>;
    /** Job runs: one line per report, so a bundle can say which failed. */
    items?: Array<{ reportName: string; runId: string | null; status: string }>;
  };
  files: DeliveryFile[];
  /** Link to the run in the API (GET /api/reporting/runs/:id or job-runs/:id). */
  runUrl: string;
}

export interface SendResult {
  outcome: ReportAttemptOutcome;
  /** HTTP status (chat, webhook, WebDAV) or SMTP reply code. */
  statusCode?: number;
  /** Our words, e.g. "Receiver answered 500", "SFTP host key does not match the pinned one". */
  error?: string;
  /** Message id, object key, remote path. */
  remoteRef?: string;
  /** e.g. `attachment_replaced_by_link`. */
  note?: string;
  /** A 429's Retry-After, honoured when longer than the next scheduled wait. */
  retryAfterMs?: number;
}

export interface TestResult {
  ok: boolean;
  error?: string;
  /** e.g. sftp `{observedHostKeySha256}`, s3 `{key}`. */
  details?: Record<string, unknown>;
}

/** What a sender gets: the channel's config (validated at save) and decrypted secrets. */
export interface ChannelContext {
  channelId: string;
  projectId: string;
  config: Record<string, unknown>;
  /** Decrypted secret values by name. */
  secrets: Record<string, string>;
  /** Every connection to a host the user chose goes through it: guardedFetch for HTTP, resolveTcp for TCP (connect to the checked address). */
  guard: OutboundGuard;
  mailer: Mailer;
  /** Aborted when the attempt's activity is cancelled or times out. */
  signal?: AbortSignal;
}

export interface ChannelSender {
  kind: ChannelKind;
  /** The targets a channel's config names (e-mail: one per to/cc/bcc recipient; others: one `default`). */
  targets(config: Record<string, unknown>): ChannelTarget[];
  /** One attempt for one target. */
  send(ctx: ChannelContext, target: ChannelTarget, message: DeliveryMessage): Promise<SendResult>;
  /**
   * POST /channels/:id/test: a test message, or write and delete `formwork-test-<channelShortId>.txt`
   * on a share. E-mail sends one message to `testRecipient` (the caller), never to the channel's recipients.
   */
  test(ctx: ChannelContext & { channelShortId: string; testRecipient?: string }): Promise<TestResult>;
}
