import type { DataSource } from 'typeorm';
import { ChannelEntity } from '../../db/reporting/channel.entity';
import { abandonDelivery, markDelivering, recordAttempt } from '../../db/deliveries/delivery-state';
import { completeOwnerIfDelivered, insertDeliveries, loadDelivery, markOwnerDelivering, settleDeliveries, type DeliveryOwner, type PlannedChannel } from '../../db/reporting/delivery-state';
import type { ReportDeliveryEntity } from '../../db/reporting/delivery.entity';
import type { DeliveryAttemptInput, DeliveryAttemptResult } from '../../domain/deliveries/attempt';
import { AppError, isRetryable } from '../../domain/errors';
import { createOutboundGuard, type OutboundGuard } from '../../adapters/http/outbound';
import type { Mailer } from '../../adapters/mail/mailer';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import type { DeliveryFile, DeliveryMessage, SendResult } from '../../adapters/channels/channel-sender';
import { CHANNEL_SENDERS } from '../../adapters/channels';

/**
 * The delivery activities of report runs and job runs (main task queue; docs/reporting.md
 * "Deliveries", "Temporal workflows"): one delivery record per channel target, and one attempt per
 * activity that sends through the channel's sender and records itself (the svix pattern of
 * document webhooks). Failures of the target are returned as outcomes; only infrastructure
 * failures throw. Channel secrets are decrypted here by row id and never pass through Temporal.
 */

export interface ReportDeliveryDeps {
  db: DataSource;
  storage: ArtefactStorage;
  mailer: Mailer;
  /** OUTBOUND_ALLOWLIST. */
  outboundAllowlist: string[];
  /** REPORTING_LINK_TTL_HOURS in seconds: the signed links put in messages. */
  linkTtlSeconds: number;
  /** PUBLIC_URL: links to the run in messages. */
  publicUrl: string;
  /** Replaces the guard (tests). */
  guard?: OutboundGuard;
  /**
   * REPORT_MAIL_PER_PROJECT_PER_HOUR (platform/report-mail-budget.ts): each e-mail attempt takes a
   * point of its project's hourly budget first; `take` answers null, or how long until there is room.
   */
  mailBudget?: { take(projectId: string): Promise<number | null> };
}

/** One attempt's budget: an upload of a large file to a slow share included. */
const ATTEMPT_TIMEOUT_MS = 5 * 60_000;

const ownerOf = (d: Pick<ReportDeliveryEntity, 'runId' | 'jobRunId'>): DeliveryOwner => (d.runId ? { runId: d.runId } : { jobRunId: d.jobRunId! });

export function createReportDeliveryActivities(deps: ReportDeliveryDeps) {
  const { db } = deps;
  // Redirects are never followed (a moved target is a failure its owner fixes); each sender sets its own timeouts.
  const guard = deps.guard ?? createOutboundGuard(deps.outboundAllowlist, { maxRedirects: 0, timeoutMs: ATTEMPT_TIMEOUT_MS });

  /** The stored, unexpired outputs of runs, with fresh signed links. */
  async function filesOf(runIds: string[]): Promise<DeliveryFile[]> {
    if (runIds.length === 0) return [];
    const rows: Array<{ run_id: string; format: DeliveryFile['format']; filename: string; storage_key: string; content_type: string; bytes: string; report_name: string }> = await db.query(
      `SELECT o.run_id, o.format, o.filename, o.storage_key, o.content_type, o.bytes, rep.name AS report_name
         FROM reporting_run_outputs o
         JOIN reporting_runs r ON r.id = o.run_id
         JOIN reporting_reports rep ON rep.id = r.report_id
        WHERE o.run_id = ANY($1::uuid[]) AND o.deleted_at IS NULL
        ORDER BY array_position($1::uuid[], o.run_id), o.created_at, o.filename`,
      [runIds],
    );
    return Promise.all(
      rows.map(async (o) => {
        const link = await deps.storage.signedUrl(o.storage_key, { ttlSeconds: deps.linkTtlSeconds, filename: o.filename });
        return {
          filename: o.filename,
          format: o.format,
          contentType: o.content_type,
          bytes: Number(o.bytes),
          open: async () => (await deps.storage.get(o.storage_key)).body,
          url: link.url,
          expiresAt: link.expiresAt.toISOString(),
          reportName: o.report_name,
        };
      }),
    );
  }

  /** What a delivery sends: its run's files, or every completed item run's files for a job run's bundle. */
  async function messageFor(d: ReportDeliveryEntity): Promise<DeliveryMessage> {
    const base = { eventId: d.id, deliveryId: d.id, projectId: d.projectId };
    if (d.runId) {
      const [run] = await db.query(
        `SELECT r.id, r.short_id, r.status, r.trigger, r.scheduled_for, r.timezone, r.parameters, rep.id AS report_id, rep.name, rep.slug
           FROM reporting_runs r JOIN reporting_reports rep ON rep.id = r.report_id WHERE r.id = $1`,
        [d.runId],
      );
      if (!run) throw new AppError('ERR_RPT_009', 'The run of this delivery no longer exists');
      return {
        ...base,
        event: 'report.run.completed',
        report: { id: run.report_id, name: run.name, slug: run.slug },
        run: { id: run.id, shortId: run.short_id, status: run.status, trigger: run.trigger, scheduledFor: new Date(run.scheduled_for).toISOString(), timezone: run.timezone, parameters: run.parameters },
        files: await filesOf([run.id]),
        runUrl: `${deps.publicUrl}/api/reporting/runs/${run.short_id}`,
      };
    }
    const [jobRun] = await db.query(
      `SELECT jr.id, jr.short_id, jr.status, jr.trigger, jr.scheduled_for, jr.timezone, j.id AS job_id, j.name
         FROM reporting_job_runs jr JOIN reporting_jobs j ON j.id = jr.job_id WHERE jr.id = $1`,
      [d.jobRunId],
    );
    if (!jobRun) throw new AppError('ERR_RJOB_003', 'The job run of this delivery no longer exists');
    // In the job's order, whatever order the runs were opened in.
    const items: Array<{ id: string | null; status: string; report_name: string }> = await db.query(
      `SELECT r.id, coalesce(r.status, i.item->>'status') AS status, rep.name AS report_name
         FROM reporting_job_runs jr, jsonb_array_elements(jr.items) WITH ORDINALITY AS i(item, n)
         LEFT JOIN reporting_runs r ON r.id = (i.item->>'runId')::uuid
         LEFT JOIN reporting_reports rep ON rep.id = (i.item->>'reportId')::uuid
        WHERE jr.id = $1 ORDER BY i.n`,
      [jobRun.id],
    );
    return {
      ...base,
      event: 'report.job_run.completed',
      report: { id: jobRun.job_id, name: jobRun.name, slug: null },
      run: {
        id: jobRun.id,
        shortId: jobRun.short_id,
        status: jobRun.status,
        trigger: jobRun.trigger,
        scheduledFor: new Date(jobRun.scheduled_for).toISOString(),
        timezone: jobRun.timezone,
        parameters: {},
        items: items.map((i) => ({ reportName: i.report_name, runId: i.id, status: i.status })),
      },
      files: await filesOf(items.filter((i) => i.id && (i.status === 'completed' || i.status === 'delivering')).map((i) => i.id!)),
      runUrl: `${deps.publicUrl}/api/reporting/job-runs/${jobRun.short_id}`,
    };
  }

  async function send(d: ReportDeliveryEntity, channel: ChannelEntity): Promise<SendResult> {
    const sender = CHANNEL_SENDERS[channel.kind];
    const target = sender.targets(channel.config).find((t) => t.key === d.targetKey);
    if (!target) return { outcome: 'permanent', error: 'The channel no longer sends to this target' };
    if (channel.kind === 'email' && deps.mailBudget) {
      // Not sent: the attempt waits for the budget like a 429's Retry-After (the workflow's schedule decides whether it comes).
      const waitMs = await deps.mailBudget.take(channel.projectId);
      if (waitMs !== null) return { outcome: 'retry', error: "The project's hourly e-mail budget is spent (REPORT_MAIL_PER_PROJECT_PER_HOUR): not sent", retryAfterMs: waitMs };
    }
    const secrets = Object.fromEntries(Object.entries(channel.secrets ?? {}).map(([name, s]) => [name, s.value]));
    const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    try {
      return await sender.send({ channelId: channel.id, projectId: channel.projectId, config: channel.config, secrets, guard, mailer: deps.mailer, signal }, target, await messageFor(d));
    } catch (err) {
      // A sender's own bug or an unexpected error of a library: retried like a network failure, and
      // said in our words (the message of a library error may quote the remote side).
      // Our own errors (a refused target, a file past retention) are in our words and final.
      if (err instanceof AppError) return { outcome: isRetryable(err.code) ? 'retry' : 'permanent', error: err.message };
      return { outcome: 'retry', error: signal.aborted ? 'The delivery timed out' : `The delivery failed (${err instanceof Error ? err.name : 'error'})` };
    }
  }

  return {
    /**
     * One delivery per target of each of the owner's channels (e-mail: per recipient), `skipped` for
     * an inactive or deleted channel. Answers the ids to send. Idempotent.
     */
    async prepareReportDeliveries(input: DeliveryOwner): Promise<string[]> {
      const table = input.runId ? 'reporting_runs' : 'reporting_job_runs';
      const [owner] = await db.query(`SELECT project_id, channel_ids FROM ${table} WHERE id = $1`, [input.runId ?? input.jobRunId]);
      if (!owner) return [];
      const ids: string[] = owner.channel_ids ?? [];
      const channels = ids.length ? await db.getRepository(ChannelEntity).createQueryBuilder('c').where('c.project_id = :p AND c.id IN (:...ids)', { p: owner.project_id, ids }).getMany() : [];
      const planned: PlannedChannel[] = ids.map((id) => {
        const c = channels.find((x) => x.id === id);
        if (!c) return { channelId: id, kind: 'unknown', targets: [], skip: 'channel_deleted' };
        if (!c.isActive) return { channelId: id, kind: c.kind, targets: [], skip: 'channel_inactive' };
        return { channelId: id, kind: c.kind, targets: CHANNEL_SENDERS[c.kind].targets(c.config) };
      });
      return insertDeliveries(db, owner.project_id, input, planned);
    },

    /** One attempt of one delivery: send, record, and tell the workflow what to do next. */
    async attemptReportDelivery(input: DeliveryAttemptInput): Promise<DeliveryAttemptResult> {
      const d = await loadDelivery(db, input.deliveryId);
      if (!d) return { outcome: 'permanent' };
      if (d.status === 'completed' || d.status === 'skipped') return { outcome: 'delivered' };
      const channel = await db.getRepository(ChannelEntity).findOneBy({ id: d.channelId, projectId: d.projectId });
      const at = new Date();
      if (!channel || !channel.isActive) {
        const error = channel ? 'The channel is inactive: not sent' : 'The channel was deleted: not sent';
        await recordAttempt(db, 'reporting_deliveries', d.id, { attempt: { at: at.toISOString(), error, durationMs: 0 }, status: 'failed', nextAttemptAt: null });
        return { outcome: 'permanent' };
      }
      await markDelivering(db, 'reporting_deliveries', d.id);
      await markOwnerDelivering(db, d);
      const started = Date.now();
      const result = await send(d, channel);
      const willRetry = result.outcome === 'retry' && input.retryInMs !== undefined;
      const waitMs = willRetry ? Math.max(input.retryInMs!, Math.min(result.retryAfterMs ?? 0, 3_600_000)) : undefined;
      await recordAttempt(db, 'reporting_deliveries', d.id, {
        attempt: { at: at.toISOString(), ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}), error: result.error ?? null, durationMs: Date.now() - started },
        status: result.outcome === 'delivered' ? 'completed' : willRetry ? 'delivering' : 'failed',
        nextAttemptAt: waitMs !== undefined ? new Date(Date.now() + waitMs) : null,
        set: { remote_ref: result.remoteRef, note: result.note },
      });
      // A manual retry that fixed the last failed delivery completes a run that failed only for it.
      if (result.outcome === 'delivered') await completeOwnerIfDelivered(db, ownerOf(d));
      return { outcome: result.outcome, ...(waitMs !== undefined && waitMs > input.retryInMs! ? { retryAfterMs: waitMs } : {}) };
    },

    /** Ends a delivery whose workflow was cancelled, unless it already ended. */
    async abandonReportDelivery(input: { deliveryId: string }): Promise<void> {
      await abandonDelivery(db, 'reporting_deliveries', input.deliveryId);
    },

    /** The owner's final delivery status once every delivery workflow ended; moves a `delivering` run or job run. */
    async finishReportDeliveries(input: DeliveryOwner): Promise<'completed' | 'failed'> {
      return settleDeliveries(db, input);
    },
  };
}

export type ReportDeliveryActivities = ReturnType<typeof createReportDeliveryActivities>;
