import { parentPort } from 'node:worker_threads';
import { AppError } from '../../domain/errors';
import type { ImportFormat } from '../../domain/reporting/imports/model';
import { parseModelFile } from '../../domain/reporting/imports/parse';
import type { ZipCaps } from '../../domain/reporting/imports/zip';

/**
 * The thread an import's model file is read in (activities/evaluation/import-thread.ts): unzipping
 * and parsing YAML or XML of up to 10 MB takes seconds, which the thread serving HTTP never spends.
 */

export interface ImportThreadRequest {
  bytes: ArrayBuffer;
  caps: ZipCaps;
  format?: ImportFormat;
}

parentPort?.on('message', (req: ImportThreadRequest) => {
  parseModelFile(Buffer.from(req.bytes), req.caps, req.format).then(
    (parsed) => parentPort?.postMessage({ ok: true, parsed }),
    (err: unknown) => {
      // Catalogued refusals cross as they are; anything else is a failure of the service (500, logged).
      const e = err instanceof AppError ? { code: err.code, message: err.message, relatedInfo: err.relatedInfo ?? null } : { code: null, message: String((err as Error)?.message ?? err), relatedInfo: null };
      parentPort?.postMessage({ ok: false, error: e });
    },
  );
});
