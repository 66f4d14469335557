import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import workerpool from 'workerpool';
import type { ImageOptions } from '../../../domain/documents/output';
import { AppError } from '../../../domain/errors';
import { finishPdf } from './finish';
import { pdfToImages } from './images';
import { mergePdfs } from './merge';
import type { FinishCall, MergeLimits, ToolReply } from './pdf-tools';

/**
 * The process the PDF tools run in (pdf-tools.ts): each call reads its inputs from its folder,
 * writes `out` there and answers how it went. Its heap is limited (`--max-old-space-size`), so a
 * document that needs more ends this process alone.
 */

async function answer(work: () => Promise<Omit<Extract<ToolReply, { ok: true }>, 'ok'> | void>): Promise<ToolReply> {
  try {
    return { ok: true, ...(await work()) };
  } catch (err) {
    // Catalogued refusals cross as they are; anything else is a failure of the service.
    const e = err instanceof AppError ? { code: err.code, message: err.message, relatedInfo: err.relatedInfo ?? null } : { code: null, message: String((err as Error)?.stack ?? err), relatedInfo: null };
    return { ok: false, error: e };
  }
}

async function finish(dir: string, call: FinishCall): Promise<ToolReply> {
  return answer(async () => {
    const pdf = await readFile(join(dir, 'in.pdf'));
    const appendPdfs = await Promise.all(Array.from({ length: call.appendPdfs }, (_, i) => readFile(join(dir, `append-${i}.pdf`))));
    const signing = call.signing ? { ...call.signing, p12: Buffer.from(call.signing.p12, 'base64') } : undefined;
    await writeFile(join(dir, 'out'), await finishPdf(pdf, { ...call, signing, appendPdfs }, dir));
  });
}

async function toImages(dir: string, image: ImageOptions): Promise<ToolReply> {
  return answer(async () => {
    const made = await pdfToImages(await readFile(join(dir, 'in.pdf')), image, dir);
    await writeFile(join(dir, 'out'), made.body);
    return { contentType: made.contentType, fileExtension: made.fileExtension, pageCount: made.pageCount };
  });
}

async function merge(dir: string, titles: string[], limits: MergeLimits): Promise<ToolReply> {
  return answer(async () => {
    const parts = await Promise.all(titles.map(async (title, i) => ({ title, pdf: await readFile(join(dir, `part-${i}.pdf`)) })));
    const merged = await mergePdfs(parts, limits);
    await writeFile(join(dir, 'out'), merged.pdf);
    return { pageCount: merged.pageCount };
  });
}

workerpool.worker({ finish, toImages, merge });
