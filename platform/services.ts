import { createImportPool, type ImportPool } from '../adapters/evaluation/import-pool';
import { createPdfTools, type PdfTools } from '../adapters/rendering/pdf-tools/pdf-tools';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { createEvalHost } from '../adapters/evaluation/eval-host';
import { createMailer } from '../adapters/mail';
import { createChromiumPool } from '../adapters/rendering/chromium-pool';
import { ExcelThreads, type ExcelRenderer } from '../adapters/rendering/excel-threads';
import type { PdfRenderer } from '../adapters/rendering/pdf-renderer';
import type { Mailer } from '../adapters/mail/mailer';
import { createStorage } from '../adapters/storage';
import type { ArtefactStorage } from '../adapters/storage/storage';
import { openDatabase } from '../db/data-source';
import { reencryptStoredSecrets } from '../db/secrets-at-rest';
import type { Config } from '../domain/config';
import type { Evaluator } from '../domain/evaluation';
import { createLogger, type Logger } from '../domain/logger';
import type { RenderLimits } from '../domain/templates/template.types';
import { taskQueues, type TaskQueues } from '../domain/temporal-names';
import { loadKeyring } from './encryption-keys';
import { timedExcelRenderer, timedPdfRenderer } from './metrics';
import { connectTemporalClient } from './temporal';
import { createWorkflowOutbox, type WorkflowOutbox } from './workflow-outbox';

/**
 * Everything a process role needs, built once from the configuration. The API, the worker and
 * `npm start` all compose themselves from this; tests build it against their own servers.
 */
export interface Services {
  config: Config;
  logger: Logger;
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  storage: ArtefactStorage;
  mailer: Mailer;
  redis?: Redis;
  /**
   * The process's one Chromium pool (template previews, later the render activities). Built
   * here but launched by its first render, so roles that never print start no browser.
   */
  pdfRenderer: PdfRenderer;
  /** The process's Excel threads (RENDER_POOL_SIZE of them, started on first use): workbooks are built there. */
  excelRenderer: ExcelRenderer;
  /** The process's evaluation threads: every user expression and pattern runs there (docs/security.md). */
  evaluator: Evaluator;
  /** Model imports are read in worker processes (started by the first import; adapters/evaluation/import-pool.ts). */
  importPool: ImportPool;
  /** The PDF tools' processes (started by the first finishing step; adapters/rendering/pdf-tools/). */
  pdfTools: PdfTools;
  /** HMAC key for access tokens and signed local download URLs. */
  secret: string;
  /** Starts accepted records' workflows off the request path; the worker sweeps what it left (platform/workflow-outbox.ts). */
  outbox: WorkflowOutbox;
  close(): Promise<void>;
}

export async function createServices(config: Config, logger = createLogger(config.logLevel)): Promise<Services> {
  if (!config.database.url) throw new Error('DATABASE_URL is not set (npm start provides an embedded database)');
  if (!config.temporal.address) throw new Error('TEMPORAL_ADDRESS is not set (npm start provides a dev server)');
  const secret = config.auth.jwtSecret ?? (await persistedSecret(config.dataDir));
  const keyring = await loadKeyring(config);
  const db = await openDatabase(config.database.url, config.database.poolSize);
  // Rows written before secrets were encrypted (or by hand) are encrypted now; idempotent, so every role may run it.
  const encrypted = await reencryptStoredSecrets(db, keyring, 'plaintext');
  if (Object.values(encrypted).some((n) => n > 0)) logger.info('encrypted plaintext secrets at rest', encrypted);
  const temporalClient = await connectTemporalClient(config.temporal);
  const temporal = temporalClient.client;
  const redis = config.limits.redisUrl ? new Redis(config.limits.redisUrl, { enableOfflineQueue: false, lazyConnect: false }) : undefined;
  const storage = createStorage(config, { signingSecret: secret });
  const mailer = createMailer(config, { log: logger });
  // Timed for formwork_render_duration_seconds (platform/metrics.ts): every render path prints through these.
  const pdfRenderer = timedPdfRenderer(createChromiumPool(config.rendering, config.browser.executablePath));
  const excelRenderer = timedExcelRenderer(new ExcelThreads({ size: config.rendering.poolSize }));
  const evaluator = createEvalHost(config.evaluation);
  const importPool = createImportPool(config.reporting.imports);
  const pdfTools = createPdfTools(config.rendering.pdfTools);
  const queues = taskQueues(config.temporal.taskQueuePrefix);
  const outbox = createWorkflowOutbox({ db, temporal, taskQueues: queues, logger, config });
  return {
    config,
    logger,
    db,
    temporal,
    taskQueues: queues,
    storage,
    mailer,
    redis,
    pdfRenderer,
    excelRenderer,
    evaluator,
    importPool,
    pdfTools,
    secret,
    outbox,
    async close() {
      // Marks left unstarted stay in Postgres for the workers' sweep; the starts in flight settle first
      // (bounded by their deadline), so none retries on the closed connection.
      await outbox.stop();
      await pdfRenderer.close();
      await excelRenderer.close();
      await evaluator.close();
      await importPool.close();
      await pdfTools.close();
      await temporalClient.close();
      redis?.disconnect();
      await db.destroy();
    },
  };
}

/** The configured render limits: pages, rows, loop iterations, HTML size and output size. */
export function renderLimitsOf(config: Config): RenderLimits {
  return { ...config.rendering.limits, maxHtmlBytes: config.rendering.maxHtmlBytes, maxOutputBytes: config.rendering.maxOutputBytes };
}

/** Outside production a missing JWT_SECRET is generated once and kept under DATA_DIR. */
async function persistedSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'jwt-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    const secret = randomBytes(48).toString('base64url');
    await writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await readFile(file, 'utf8')).trim();
  }
}
