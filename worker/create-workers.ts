import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createDocumentActivities, createRenderActivities } from '../activities/documents';
import { createFlowRenderActivities } from '../activities/flow/flow-render.activity';
import { documentActivityDeps } from './documents';
import { ensureMaintenanceSchedule } from './schedules';
import { createFlowRunStarter, flowRunWorkflowInput, startFlowRunSweeper } from './flow-run-starter';
import { renderLimitsOf, type Services } from './services';

export interface WorkerSet {
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * One Worker per task queue. Workflows come from a prebuilt bundle when one is given (tests build
 * it once per run), otherwise they are bundled from `workflows/` at start-up.
 */
export async function createWorkers(services: Services, opts: { workflowBundlePath?: string; schedules?: boolean } = {}): Promise<WorkerSet> {
  const { config, db, mailer, taskQueues } = services;
  const connection = await NativeConnection.connect({ address: config.temporal.address! });
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundlePath
    ? { workflowBundle: { codePath: opts.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows') };
  const main = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: taskQueues.main,
    ...workflows,
    activities: {
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
      }),
      ...createDocumentActivities(documentActivityDeps(services)),
    },
  });
  const renderDeps = {
    db,
    storage: services.storage,
    pdfRenderer: () => services.pdfRenderer,
    evaluator: services.evaluator,
    excelRenderer: services.excelRenderer,
    limits: renderLimitsOf(config),
    imageAllowlist: config.rendering.imageHostAllowlist,
  };
  const render = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: taskQueues.render,
    activities: { ...createRenderActivities(renderDeps), ...createFlowRenderActivities(renderDeps) },
    // The Chromium pool bounds concurrent pages. Twice as many tasks keep the pages busy while
    // other tasks load their job or store their artefact; beyond that they would only queue.
    maxConcurrentActivityTaskExecutions: config.rendering.poolSize * 2,
  });
  const workers = [main, render];
  if (opts.schedules !== false) await ensureMaintenanceSchedule(services);
  let running: Promise<unknown> | undefined;
  // Starts Flow run workflows an API replica accepted but could not start (docs/flow.md).
  const flowRuns = createFlowRunStarter({
    db,
    temporal: services.temporal,
    taskQueue: taskQueues.main,
    logger: services.logger,
    workflowInput: flowRunWorkflowInput(services),
  });
  let stopFlowSweep: (() => void) | undefined;
  return {
    run() {
      stopFlowSweep ??= startFlowRunSweeper(flowRuns, services.logger);
      running ??= Promise.all(workers.map((w) => w.run()));
      return running.then(() => undefined);
    },
    async shutdown() {
      stopFlowSweep?.();
      flowRuns.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
    },
  };
}
