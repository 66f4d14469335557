import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../../domain/errors';
import type { ImportFormat } from '../../domain/reporting/imports/model';
import type { ParsedFile } from '../../domain/reporting/imports/parse';
import type { ZipCaps } from '../../domain/reporting/imports/zip';
import { threadFile } from '../threads';
import type { ImportThreadRequest } from './import-worker';

/**
 * Reads a model file in a thread of its own (one per import: imports are rare), within a time and
 * heap budget: a file that takes longer, or more memory, is refused as invalid (400 ERR_IMP_003)
 * and the thread is ended. The parsers' own caps (zip, aliases, entities) apply inside it.
 */

export interface ImportThreadLimits {
  timeoutMs: number;
  maxHeapMb: number;
}

type Reply = { ok: true; parsed: ParsedFile } | { ok: false; error: { code: ErrorCode | null; message: string; relatedInfo: Record<string, unknown> | null } };

const tooCostly = (message: string) => new AppError('ERR_IMP_003', undefined, { errors: [{ path: '$', message }] });

export function parseInThread(bytes: Buffer, caps: ZipCaps, format: ImportFormat | undefined, limits: ImportThreadLimits): Promise<ParsedFile> {
  const worker = new Worker(threadFile('evaluation/import-worker'), { resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb } });
  return new Promise<ParsedFile>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(tooCostly(`reading the file took longer than ${Math.round(limits.timeoutMs / 1000)} s`))), limits.timeoutMs);
    worker.on('message', (reply: Reply) =>
      finish(() => {
        if (reply.ok) resolve(reply.parsed);
        else reject(reply.error.code ? new AppError(reply.error.code, reply.error.message, reply.error.relatedInfo ?? undefined) : new Error(`import thread: ${reply.error.message}`));
      }),
    );
    worker.on('error', (err) => finish(() => reject(/memory/i.test(err.message) ? tooCostly('reading the file needed more memory than allowed') : err)));
    worker.on('exit', () => finish(() => reject(tooCostly('the file could not be read'))));
    const copy = new Uint8Array(bytes).buffer;
    worker.postMessage({ bytes: copy, caps, format } satisfies ImportThreadRequest, [copy]);
  });
}
