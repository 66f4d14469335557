import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { temporalConnectionOptions, workerDeploymentOptions } from '../platform/temporal';
import { createActivities } from '../activities';
import { activityInterceptors } from '../activities/failure';
import { createDocumentActivities, createRenderActivities } from '../activities/documents';
import { createBatchArchiveActivities, createBatchArchiveBookkeeping } from '../activities/documents/batch-archive.activity';
import { createFlowRenderActivities } from '../activities/flow/flow-render.activity';
import { acceptanceLimits } from '../domain/documents/acceptance';
import { createPreviewActivities } from '../activities/rendering/render-preview.activity';
import { createQueryActivities } from '../activities/reporting/run-direct-query.activity';
import { createProbeActivities } from '../activities/reporting/probe.activity';
import { createAgentQueryActivities } from '../activities/reporting/run-agent-query.activity';
import { createReportRunActivities } from '../activities/reporting/report-run.activity';
import { createReportMaintenanceActivities } from '../activities/reporting/report-maintenance.activity';
import { createReportRenderActivities } from '../activities/reporting/render-report.activity';
import { createScheduleActivities } from '../activities/reporting/schedule.activity';
import { createReportDeliveryActivities } from '../activities/reporting/deliver-report.activity';
import { createJobRunActivities } from '../activities/reporting/job-run.activity';
import { documentActivityDeps } from './documents';
import { maintenanceActivities } from './maintenance';
import { ensureMaintenanceSchedule } from './schedules';
import { startOutboxSweeper } from '../platform/workflow-outbox';
import { signalReviewDigest, startDeliveryRetries, startJobRunWorkflow, startReportRun } from '../platform/workflow-starts';
import { reportSchedulePort } from '../platform/report-schedules';
import { reportMailBudget } from '../platform/report-mail-budget';
import { renderLimitsOf, type Services } from '../platform/services';
import { countCircuitOpening, withActivityMetrics } from '../platform/metrics';
import { databaseAssets } from '../adapters/rendering/render-assets';
import { assetRows } from '../db/templates/asset-rows';
import { createMergeJobActivities } from '../activities/documents/merge-job.activity';
import { openSigningCertificate } from '../db/documents/signing-certificates';

export interface WorkerSet {
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The task queues a process polls. `main`: workflows and bookkeeping activities (the database);
 * `egress`: activities that wait on other servers (webhook attempts, report deliveries, e-mail,
 * custom render APIs), EGRESS_ACTIVITY_SLOTS at once, polled by the worker role beside main; `render`: Chromium and ExcelJS (document renders and
 * Flow native renders); `query`: reporting queries against customers' databases (runDirectQuery)
 * and the API's datasource calls (probeDatasource), REPORTING_QUERY_CONCURRENCY at once. Production
 * runs render and query each in a process of its own (`npm run start:render-worker`,
 * `npm run start:query-worker`), so a render that crashes or stalls its process, or a tenant's
 * hostile database, cannot stop the main queue or the API; the worker role (`npm run start:worker`,
 * `npm start`) polls main and egress. Tests may poll all four in one process.
 */
export type QueueRole = 'main' | 'egress' | 'render' | 'query';

export interface CreateWorkersOptions {
  /** The queues this process polls (default all four: the in-process test setup). */
  queues?: readonly QueueRole[];
  /** A prebuilt workflow bundle (tests build it once per run); otherwise bundled from `workflows/`. */
  workflowBundlePath?: string;
  /** Create the maintenance schedule (main queue only; default true). */
  schedules?: boolean;
}

/** The activities of the main and egress queues. */
function createMainActivities(services: Services) {
  const { config, db, mailer } = services;
  const documents = createDocumentActivities(documentActivityDeps(services));
  return {
    ...createActivities({
      db,
      mailer,
      storage: services.storage,
      publicUrl: config.publicUrl,
      emailTokenTtlSeconds: config.auth.emailTokenTtlSeconds,
      outboundAllowlist: config.outbound.allowlist,
      customRenderMaxBytes: config.rendering.maxCustomRenderBytes,
      downloadUrlTtlSeconds: config.storage.downloadUrlTtlSeconds,
      flowMinuteMs: config.flowApprovals.minuteMs,
      onCircuitOpened: countCircuitOpening,
      startDeliveryRetry: (delivery) => startDeliveryRetries(services, delivery),
      signalReviewDigest: (digest) => signalReviewDigest(services, digest),
    }),
    ...documents,
    ...maintenanceActivities(services, documents),
    ...createBatchArchiveBookkeeping(db),
    ...createReportRunActivities({
      db,
      evaluator: services.evaluator,
      freeDocumentsPerMonth: config.documents.freeDocumentsPerMonth,
      artefactRetentionDays: config.reporting.artefactRetentionDays,
      agents: {
        queueTimeoutSeconds: config.reporting.agentQueueTimeoutSeconds,
        heartbeatTimeoutSeconds: config.reporting.agentHeartbeatTimeoutSeconds,
        retryDelaySeconds: config.reporting.agentRetryDelaySeconds,
      },
    }),
    ...createReportMaintenanceActivities({ db, storage: services.storage, restartRun: (run) => startReportRun(services, run), restartJobRun: (jobRun) => startJobRunWorkflow(services, jobRun) }),
    ...createScheduleActivities({ db, schedules: reportSchedulePort(services), deliveryRetryDelaysMs: config.reporting.deliveryRetryDelaysMs }),
    ...createJobRunActivities({ db, deliveryRetryDelaysMs: config.reporting.deliveryRetryDelaysMs }),
    ...createAgentQueryActivities({ db, limits: config.reporting }),
    ...createReportDeliveryActivities({
      db,
      storage: services.storage,
      mailer,
      outboundAllowlist: config.outbound.allowlist,
      linkTtlSeconds: config.reporting.linkTtlSeconds,
      publicUrl: config.publicUrl,
      mailBudget: reportMailBudget(services),
    }),
  };
}

/** A batch archive's limits (docs/documents.md "Batch archives"): a merged PDF has at most MERGE_MAX_PAGES pages. */
function batchArchiveLimits(config: Services['config']) {
  return {
    maxBytes: config.documents.archive.maxBytes,
    maxPages: config.rendering.merge.maxPages,
    maxMergeInputBytes: (config.rendering.pdfTools.maxHeapMb * 1024 * 1024) / 2,
  };
}

/** One Worker per task queue this process polls. */
export async function createWorkers(services: Services, opts: CreateWorkersOptions = {}): Promise<WorkerSet> {
  const { config, db, taskQueues } = services;
  const queues = new Set<QueueRole>(opts.queues ?? ['main', 'egress', 'render', 'query']);
  if (queues.size === 0) throw new Error('createWorkers: no task queue to poll');
  const connection = await NativeConnection.connect(temporalConnectionOptions(config.temporal));
  // Every queue's worker polls as the same deployment version (when one is configured). On SIGTERM
  // each stops polling and gives its running activities the grace time to finish; then they are
  // cancelled (a render stops and stores nothing) and Temporal retries them on another worker.
  const deployment = { ...workerDeploymentOptions(config.temporal), shutdownGraceTime: config.temporal.shutdownGraceSeconds * 1000 };
  const workers: Worker[] = [];
  try {
    // Main and egress register the same activities: the workflow decides where each call runs
    // (workflows/shared/egress.ts), and a task scheduled on main before the egress queue existed still finds its activity.
    const mainActivities = queues.has('main') || queues.has('egress') ? createMainActivities(services) : undefined;
    if (queues.has('main')) {
      const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundlePath
        ? { workflowBundle: { codePath: opts.workflowBundlePath } }
        : // A versioned worker registers each type with its versioning behaviour (workflows/versioned.ts).
          { workflowsPath: require.resolve(config.temporal.deployment ? '../workflows/versioned' : '../workflows') };
      workers.push(
        await Worker.create({
          connection,
          ...deployment,
          namespace: config.temporal.namespace,
          taskQueue: taskQueues.main,
          ...workflows,
          interceptors: withActivityMetrics(activityInterceptors()),
          // Sized to the database pool (WORKER_ACTIVITY_SLOTS, config.ts mainActivitySlots).
          maxConcurrentActivityTaskExecutions: config.temporal.mainActivitySlots,
          activities: mainActivities,
        }),
      );
    }
    if (queues.has('egress')) {
      workers.push(
        await Worker.create({
          connection,
          ...deployment,
          namespace: config.temporal.namespace,
          taskQueue: taskQueues.egress,
          interceptors: withActivityMetrics(activityInterceptors()),
          // Sized to sockets (EGRESS_ACTIVITY_SLOTS): each waits on another server far longer than on the database.
          maxConcurrentActivityTaskExecutions: config.temporal.egressActivitySlots,
          activities: mainActivities,
        }),
      );
    }
    if (queues.has('render')) {
      const renderDeps = {
        db,
        storage: services.storage,
        pdfRenderer: () => services.pdfRenderer,
        evaluator: services.evaluator,
        excelRenderer: services.excelRenderer,
        limits: renderLimitsOf(config),
        imageAllowlist: config.rendering.imageHostAllowlist,
        assets: databaseAssets(assetRows(db)),
        pdfTools: services.pdfTools,
        signing: (projectId: string, certificateId: string) => openSigningCertificate(db, projectId, certificateId),
        outboundAllowlist: config.outbound.allowlist,
        acceptance: acceptanceLimits(config),
      };
      workers.push(
        await Worker.create({
          connection,
          ...deployment,
          namespace: config.temporal.namespace,
          taskQueue: taskQueues.render,
          activities: {
            ...createRenderActivities(renderDeps),
            ...createBatchArchiveActivities({ db, storage: services.storage, pdfTools: services.pdfTools, limits: batchArchiveLimits(services.config) }),
            ...createMergeJobActivities({ ...renderDeps, merge: config.rendering.merge, maxOutputBytes: config.rendering.maxOutputBytes }),
            ...createFlowRenderActivities({ ...renderDeps, freeDocumentsPerMonth: config.documents.freeDocumentsPerMonth }),
            ...createPreviewActivities(renderDeps),
            ...createReportRenderActivities({ ...renderDeps, resultMaxBytes: config.reporting.resultMaxBytes, maxRows: config.reporting.maxRows }),
          },
          interceptors: withActivityMetrics(activityInterceptors()),
          // The Chromium pool bounds concurrent pages. Twice as many tasks keep the pages busy while
          // other tasks load their job or store their artefact; beyond that they would only queue.
          maxConcurrentActivityTaskExecutions: config.rendering.poolSize * 2,
          // Heartbeats carry cancellations: sent at once, so a cancelled job's page closes within seconds.
          maxHeartbeatThrottleInterval: '1 second',
        }),
      );
    }
    if (queues.has('query')) {
      workers.push(
        await Worker.create({
          connection,
          ...deployment,
          namespace: config.temporal.namespace,
          taskQueue: taskQueues.query,
          activities: {
            ...createQueryActivities({
              db,
              storage: services.storage,
              outboundAllowlist: config.outbound.allowlist,
              evaluator: services.evaluator,
              limits: config.reporting,
            }),
            // The API's datasource tests, schema discoveries and previews (api/reporting/probes.ts).
            ...createProbeActivities({ storage: services.storage, outboundAllowlist: config.outbound.allowlist, evaluator: services.evaluator }),
          },
          interceptors: withActivityMetrics(activityInterceptors()),
          maxConcurrentActivityTaskExecutions: config.reporting.queryConcurrency,
          // Heartbeats carry cancellations: sent at once (run-direct-query.activity.ts), so a cancelled run's statement stops within seconds.
          maxHeartbeatThrottleInterval: '1 second',
        }),
      );
    }
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  const main = queues.has('main');
  if (main && opts.schedules !== false) await ensureMaintenanceSchedule(services);
  let running: Promise<unknown> | undefined;
  // Starts the workflows an API replica accepted but could not start (platform/workflow-outbox.ts): a main-queue duty.
  let stopSweep: (() => void) | undefined;
  return {
    run() {
      if (main) stopSweep ??= startOutboxSweeper(services.outbox, services.logger, config.outbox.sweepIntervalMs);
      running ??= Promise.all(workers.map((w) => w.run()));
      return running.then(() => undefined);
    },
    async shutdown() {
      stopSweep?.();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
    },
  };
}
