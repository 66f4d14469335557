import type { FinishRequest } from './pdf-tools';
import { appendPdfs } from './merge';
import { applyPdfa, makePdfa, readPrinted } from './pdfa';
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
  const archival = Boolean(output.pdfa || output.attachments?.length || output.facturx);
  if (output.signature) {
    if (!request.signing) throw new Error('output.signature without its signing material');
    // A signed PDF/A is parsed once and written once: the signature's placeholder goes into the
    // document PDF/A just edited (a save and a parse fewer; the signature's save has no object streams).
    let doc: Buffer | Awaited<ReturnType<typeof readPrinted>> = out;
    if (archival) {
      doc = await readPrinted(out);
      await applyPdfa(doc, out, request);
    }
    out = await signPdf(doc, output.signature, request.signing, request);
  } else if (archival) out = await makePdfa(out, request);
  if (output.encryption) out = await encryptPdf(out, output.encryption, dir);
  return out;
}
