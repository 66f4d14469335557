import type workerpool from 'workerpool';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { ImportFormat } from '../../domain/reporting/imports/model';
import type { ParsedFile } from '../../domain/reporting/imports/parse';
import type { ZipCaps } from '../../domain/reporting/imports/zip';
import { threadFile } from '../threads';
import { processPool } from './process-pool';

/**
 * Reads model files for imports (docs/security.md "Reporting: caps while reading") in worker
 * *processes* (workerpool), never in the process that serves HTTP: at most `concurrency` at once
 * per replica, at most `queue` more waiting, one per project at a time; each process's heap limited
 * to `maxHeapMb` (a worker thread's heap limit does not survive one large allocation: V8 aborts the
 * whole process, see eval-pool.ts). A file that needs more memory or more than `timeoutMs` is
 * refused as invalid (400 ERR_IMP_003) and its process ended; a project with an import being read,
 * or a full queue, is answered 429 ERR_LIMIT_016 with a `retryAfter`.
 */
export interface ImportPoolOptions {
  concurrency: number;
  queue: number;
  maxHeapMb: number;
  timeoutMs: number;
}

export type ImportReply = { ok: true; parsed: ParsedFile } | { ok: false; error: { code: ErrorCode | null; message: string; relatedInfo: Record<string, unknown> | null } };

export interface ImportPool {
  /** Parses the uploaded file at `path` for `projectId`. */
  parse(projectId: string, path: string, caps: ZipCaps, format: ImportFormat | undefined): Promise<ParsedFile>;
  close(): Promise<void>;
}

const tooCostly = (message: string) => new AppError('ERR_IMP_003', undefined, { errors: [{ path: '$', message }] });
const busy = (message: string) => new AppError('ERR_LIMIT_016', message, { retryAfter: 5 });

export function createImportPool(options: ImportPoolOptions): ImportPool {
  let pool: ReturnType<typeof workerpool.pool> | undefined;
  /** Started with the first import: most replicas never read one. */
  const started = () =>
    // A worker that dies on its own while workerpool ends it (a timed-out read) is not waited for: process-pool.ts.
    (pool ??= processPool(threadFile('evaluation/import-worker'), {
      minWorkers: 0,
      maxWorkers: options.concurrency,
      maxQueueSize: options.queue,
      forkOpts: { execArgv: [`--max-old-space-size=${options.maxHeapMb}`, '--max-semi-space-size=4'] },
      emitStdStreams: true,
      workerTerminateTimeout: 100,
    }));
  const reading = new Set<string>();
  return {
    async parse(projectId, path, caps, format) {
      if (reading.has(projectId)) throw busy('An import of this project is being read; try again when it has finished');
      const p = started();
      const stats = p.stats();
      if (stats.pendingTasks >= options.queue) throw busy('Too many imports are being read; try again shortly');
      reading.add(projectId);
      try {
        const reply = (await p.exec('parseModel', [path, caps, format]).timeout(options.timeoutMs)) as ImportReply;
        if (reply.ok) return reply.parsed;
        throw reply.error.code ? new AppError(reply.error.code, reply.error.message, reply.error.relatedInfo ?? undefined) : new Error(`import worker: ${reply.error.message}`);
      } catch (err) {
        if (err instanceof AppError || (err instanceof Error && err.message.startsWith('import worker:'))) throw err;
        const e = err as Error;
        if (e.name === 'TimeoutError') throw tooCostly(`reading the file took longer than ${Math.round(options.timeoutMs / 1000)} s`);
        if (/terminated unexpectedly|exitCode|signal/i.test(e.message)) throw tooCostly('reading the file needed more memory than allowed');
        throw err;
      } finally {
        reading.delete(projectId);
      }
    },
    async close() {
      await pool?.terminate(true);
    },
  };
}
