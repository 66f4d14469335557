import { readFile } from 'node:fs/promises';
import workerpool from 'workerpool';
import { AppError } from '../../domain/errors';
import type { ImportFormat } from '../../domain/reporting/imports/model';
import { parseModelFile } from '../../domain/reporting/imports/parse';
import type { ZipCaps } from '../../domain/reporting/imports/zip';
import type { ImportReply } from './import-pool';

/**
 * The process an import's model file is read in (adapters/evaluation/import-pool.ts): it reads
 * the uploaded file from its path, unzips and parses it, and answers the items or the catalogued
 * refusal. Its heap is limited (`--max-old-space-size`), so a file that needs more ends this
 * process alone.
 */
async function parseModel(path: string, caps: ZipCaps, format?: ImportFormat): Promise<ImportReply> {
  try {
    return { ok: true, parsed: await parseModelFile(await readFile(path), caps, format) };
  } catch (err) {
    // Catalogued refusals cross as they are; anything else is a failure of the service (500, logged).
    const e = err instanceof AppError ? { code: err.code, message: err.message, relatedInfo: err.relatedInfo ?? null } : { code: null, message: String((err as Error)?.message ?? err), relatedInfo: null };
    return { ok: false, error: e };
  }
}

workerpool.worker({ parseModel });
