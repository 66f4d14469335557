import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type workerpool from 'workerpool';
import type { ImageOptions, OutputOptions } from '../../../domain/documents/output';
import { AppError, type ErrorCode } from '../../../domain/errors';
import { threadFile } from '../../threads';
import { processPool } from '../../evaluation/process-pool';

/**
 * The PDF tools (docs/documents.md "Output options"): every step after Chromium prints (PDF/A,
 * attachments and the e-invoice, appended PDFs, the signature, encryption, images, merging) runs
 * in worker *processes* (workerpool, like the import pool) with a heap limit, never on the thread
 * that polls Temporal. Files cross through a private temporary folder, not the IPC channel.
 * A step that needs more memory or time than allowed fails with ERR_OUTPUT_004 and its process ends.
 */

/** A project's signing certificate, opened for one signature (db/documents/signing-certificates). */
export interface SigningMaterial {
  /** The PKCS#12 bytes. */
  p12: Buffer;
  password: string;
  /** An RFC 3161 timestamp authority; the signature is then PAdES B-T. */
  timestampUrl?: string;
}

/** What a finish needs besides the PDF. */
export interface FinishRequest {
  output: OutputOptions;
  /** Document information: the title (the filename or gate/report name), the producer's time. */
  title?: string;
  createdAt: string;
  /** The resolved template variables (the e-invoice's source). */
  variables?: Record<string, unknown>;
  /** Loaded when output.signature is asked for. */
  signing?: SigningMaterial;
  /** The outbound guard's allowlist (OUTBOUND_ALLOWLIST), for the timestamp authority. */
  outboundAllowlist?: string[];
  /** Static PDFs the template appends (terms and conditions), in order. */
  appendPdfs?: Buffer[];
}

/** The request as it crosses to the worker: buffers become files in the call's folder. */
export type FinishCall = Omit<FinishRequest, 'signing' | 'appendPdfs'> & {
  signing?: Omit<SigningMaterial, 'p12'> & { p12: string };
  appendPdfs: number;
};

export interface ImageResult {
  body: Buffer;
  contentType: 'image/png' | 'application/zip';
  fileExtension: 'png' | 'zip';
  pageCount: number;
}

export interface MergePart {
  pdf: Buffer;
  /** The bookmark of the part. */
  title: string;
}

export interface MergeLimits {
  maxPages: number;
  /** A free merge carries the FORMWORK FREE watermark on every page, like a free generation. */
  watermark?: boolean;
}

export interface PdfTools {
  /** The output options applied to a printed PDF, in their fixed order (finish.ts). */
  finish(pdf: Buffer, request: FinishRequest, signal?: AbortSignal): Promise<Buffer>;
  /** PNG of the first page, or a ZIP of every page's PNG, at the DPI asked. */
  toImages(pdf: Buffer, options: ImageOptions, signal?: AbortSignal): Promise<ImageResult>;
  /** One PDF of the parts, a bookmark per part, page labels kept. */
  merge(parts: MergePart[], limits: MergeLimits, signal?: AbortSignal): Promise<{ pdf: Buffer; pageCount: number }>;
  close(): Promise<void>;
}

export interface PdfToolsOptions {
  /** Processes at once (PDF_TOOLS_CONCURRENCY; default the render pool size). */
  concurrency: number;
  maxHeapMb: number;
  timeoutMs: number;
  /** Where the calls' folders are made (default the system's). */
  tmpDir?: string;
}

/** What a worker answers: the output file is `out` in the call's folder, or a catalogued refusal. */
export type ToolReply = { ok: true; pageCount?: number; contentType?: string; fileExtension?: string } | { ok: false; error: { code: ErrorCode | null; message: string; relatedInfo: Record<string, unknown> | null } };

const tooCostly = (message: string) => new AppError('ERR_OUTPUT_004', message);

export function createPdfTools(options: PdfToolsOptions): PdfTools {
  let pool: ReturnType<typeof workerpool.pool> | undefined;
  const started = () =>
    (pool ??= processPool(threadFile('rendering/pdf-tools/pdf-tools-worker'), {
      minWorkers: 0,
      maxWorkers: options.concurrency,
      forkOpts: { execArgv: [`--max-old-space-size=${options.maxHeapMb}`, '--max-semi-space-size=8'] },
      emitStdStreams: true,
      workerTerminateTimeout: 100,
    }));

  /** Runs `method` on a worker with a fresh folder holding `files`; answers the reply and the folder's `out`. */
  async function call(method: string, files: Record<string, Buffer>, args: unknown[], signal?: AbortSignal): Promise<{ reply: Extract<ToolReply, { ok: true }>; out: Buffer }> {
    signal?.throwIfAborted();
    const dir = join(options.tmpDir ?? tmpdir(), `formwork-pdf-${randomUUID()}`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      await Promise.all(Object.entries(files).map(([name, body]) => writeFile(join(dir, name), body, { mode: 0o600 })));
      signal?.throwIfAborted();
      const task = started().exec(method, [dir, ...args]).timeout(options.timeoutMs);
      const cancel = () => void task.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
      let reply: ToolReply;
      try {
        reply = (await task) as ToolReply;
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        const e = err as Error;
        if (e.name === 'TimeoutError') throw tooCostly(`finishing the document took longer than ${Math.round(options.timeoutMs / 1000)} s`);
        if (/terminated unexpectedly|exitCode|signal/i.test(e.message)) throw tooCostly('finishing the document needed more memory than allowed');
        throw err;
      } finally {
        signal?.removeEventListener('abort', cancel);
      }
      if (!reply.ok) {
        throw reply.error.code ? new AppError(reply.error.code, reply.error.message, reply.error.relatedInfo ?? undefined) : new Error(`pdf tools: ${reply.error.message}`);
      }
      return { reply, out: await readFile(join(dir, 'out')) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  return {
    async finish(pdf, request, signal) {
      const { signing, appendPdfs = [], ...rest } = request;
      const files: Record<string, Buffer> = { 'in.pdf': pdf };
      appendPdfs.forEach((b, i) => (files[`append-${i}.pdf`] = b));
      const payload: FinishCall = { ...rest, appendPdfs: appendPdfs.length, ...(signing ? { signing: { ...signing, p12: signing.p12.toString('base64') } } : {}) };
      return (await call('finish', files, [payload], signal)).out;
    },
    async toImages(pdf, image, signal) {
      const { reply, out } = await call('toImages', { 'in.pdf': pdf }, [image], signal);
      return { body: out, contentType: reply.contentType as ImageResult['contentType'], fileExtension: reply.fileExtension as ImageResult['fileExtension'], pageCount: reply.pageCount ?? 1 };
    },
    async merge(parts, limits, signal) {
      const files = Object.fromEntries(parts.map((p, i) => [`part-${i}.pdf`, p.pdf]));
      const { reply, out } = await call('merge', files, [parts.map((p) => p.title), limits], signal);
      return { pdf: out, pageCount: reply.pageCount ?? 0 };
    },
    async close() {
      await pool?.terminate(true);
    },
  };
}
