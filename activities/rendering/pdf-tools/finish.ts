import type { FinishRequest } from './pdf-tools';
import { appendPdfs } from './merge';
import { makePdfa } from './pdfa';
import { signPdf } from './sign';
import { encryptPdf } from './encrypt';

/**
 * The output options applied to a printed PDF, in a fixed order (domain/documents/output.ts):
 * appended PDFs first (so they are part of what PDF/A, the signature and encryption cover), then
 * PDF/A with its attachments and e-invoice, then the signature, then encryption. `dir` is the
 * call's private folder, for steps that run a tool on files.
 */
export async function finishPdf(pdf: Buffer, request: FinishRequest, dir: string): Promise<Buffer> {
  const { output } = request;
  let out = pdf;
  if (request.appendPdfs?.length) out = await appendPdfs(out, request.appendPdfs);
  if (output.pdfa || output.attachments?.length || output.facturx) out = await makePdfa(out, request);
  if (output.signature) {
    if (!request.signing) throw new Error('output.signature without its signing material');
    out = await signPdf(out, output.signature, request.signing, request);
  }
  if (output.encryption) out = await encryptPdf(out, output.encryption, dir);
  return out;
}
