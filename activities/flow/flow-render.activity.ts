import { Context, heartbeat } from '@temporalio/activity';
import type { DataSource } from 'typeorm';
import { GateEntity } from '../../db/flow/gate.entity';
import { RunEntity } from '../../db/flow/run.entity';
import { setRunArtefact } from '../../db/flow/run-lifecycle';
import { loadPublishedVersion } from '../../db/templates/template-lookup';
import { AppError } from '../../domain/errors';
import { checkAcceptance, type AcceptanceLimits } from '../../domain/documents/acceptance';
import type { Evaluator } from '../../domain/evaluation';
import { webhookSignature } from '../../domain/signing';
import type { RenderLimits } from '../../domain/templates/template.types';
import { USER_AGENTS } from '../../domain/webhooks/delivery';
import { createOutboundGuard } from '../../adapters/http/outbound';
import type { ExcelRenderer } from '../../adapters/rendering/excel-threads';
import type { PdfRenderer } from '../../adapters/rendering/pdf-renderer';
import { CONTENT_TYPES, renderDocument, type RenderDeps } from '../../adapters/rendering/render-document';
import { chargeRunAtRender } from '../../db/flow/run-billing';
import { gateRenderSettings } from '../../domain/flow/render-output';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import type { AssetLoader } from '../../adapters/rendering/render-assets';
import { withHeartbeat } from '../heartbeat';

/**
 * A run's artefact (spec, Gate `renderMode`), stored at `flow-runs/<projectId>/<runId>.<ext>`.
 * Both activities are idempotent (a run that has its artefact is not rendered again) and throw on
 * failure: the workflow's retry policy tries a few times, then fails the run with the message.
 * A catalogued error they throw goes through the failure mapper (activities/failure.ts, on every
 * Worker): one that cannot pass on a retry (no template, a refused URL, a limit) is non-retryable,
 * an outage (5xx code) is retried.
 */

function flowArtefactKey(projectId: string, runId: string, ext: string): string {
  return `flow-runs/${projectId}/${runId}.${ext}`;
}

async function loadRun(db: DataSource, runId: string): Promise<{ run: RunEntity; gate: GateEntity }> {
  const run = await db.getRepository(RunEntity).findOneBy({ id: runId });
  if (!run) throw new AppError('FLOW.RUN_NOT_FOUND', `run ${runId} no longer exists`);
  const gate = await db.getRepository(GateEntity).findOneByOrFail({ id: run.gateId });
  return { run, gate };
}

export interface FlowRenderDeps {
  db: DataSource;
  storage: ArtefactStorage;
  pdfRenderer: () => PdfRenderer;
  evaluator: Evaluator;
  excelRenderer?: ExcelRenderer;
  limits: RenderLimits;
  imageAllowlist: string[];
  /** The project's images and fonts a template names (render-assets.ts). */
  assets?: AssetLoader;
  /** `renderConfig.output`: the PDF tools, signing certificates, the outbound allowlist (render-document.ts). */
  pdfTools?: RenderDeps['pdfTools'];
  signing?: RenderDeps['signing'];
  outboundAllowlist?: string[];
  /** FREE_DOCUMENTS_PER_MONTH, for a run charged when it renders (db/flow/run-billing.ts). */
  freeDocumentsPerMonth: number;
  /** The checks a document's variables pass before a render starts (docs/documents.md "Checks at acceptance"). */
  acceptance: AcceptanceLimits;
}

/**
 * `native`: the gate's template (latest published version) with the validated payload as
 * variables, in `renderConfig.format`, finished as `renderConfig.output` asks. The document is
 * one of the project's documents (docs/documents.md "Quotas and the watermark on every output"):
 * charged when the run was accepted (or here, if it was not), watermarked when it took a free one.
 * Render task queue.
 */
export function createFlowRenderActivities(deps: FlowRenderDeps) {
  return {
    async renderFlowArtefact(input: { runId: string }): Promise<{ artefactKey: string }> {
      const { run, gate } = await loadRun(deps.db, input.runId);
      if (run.artefactKey) return { artefactKey: run.artefactKey };
      if (!gate.renderTemplateId) throw new AppError('ERR_VALID_005', 'The gate has no renderTemplateId');
      const { format, output, useCredit } = gateRenderSettings(gate.renderConfig);
      const published = await loadPublishedVersion(deps.db, run.projectId, gate.renderTemplateId);
      // Freetext runs have a string payload: templates see it as `text`.
      const variables = typeof run.inputPayload === 'string' ? { text: run.inputPayload } : (run.inputPayload as Record<string, unknown>);
      // What a generation refuses at acceptance fails the run before any render (and before it is
      // charged), with the same code (ERR_LIMIT_007, ERR_LIMIT_017, ERR_OUTBOUND_001, …), not retried.
      checkAcceptance(published.definition, variables, format, deps.acceptance, 'inputPayload.');
      // A quota or credit error here is catalogued (not retried): the run fails with its code.
      const billing = run.billing ?? (await chargeRunAtRender(deps.db, run.id, { projectId: run.projectId, useCredit, freeLimit: deps.freeDocumentsPerMonth, runShortId: run.shortId }));
      return withHeartbeat(() => heartbeat(), 2000, async () => {
        const doc = await renderDocument(
          {
            pdfRenderer: deps.pdfRenderer(),
            evaluator: deps.evaluator,
            excelRenderer: deps.excelRenderer,
            limits: deps.limits,
            imageAllowlist: deps.imageAllowlist,
            assets: deps.assets,
            pdfTools: deps.pdfTools,
            signing: deps.signing,
            outboundAllowlist: deps.outboundAllowlist,
          },
          // A cancelled attempt (the worker's shutdown grace time ran out) stops rendering and stores nothing.
          {
            tenant: run.projectId,
            template: published.definition,
            variables,
            format,
            output,
            watermark: billing === 'free',
            title: `${gate.name} ${run.shortId}`,
            signal: Context.current().cancellationSignal,
          },
        );
        const key = flowArtefactKey(run.projectId, run.id, doc.fileExtension);
        await deps.storage.put(key, doc.body, doc.contentType);
        await setRunArtefact(deps.db, run.id, key);
        return { artefactKey: key };
      });
    },
  };
}
export type FlowRenderActivities = ReturnType<typeof createFlowRenderActivities>;

/** Default of CUSTOM_RENDER_MAX_BYTES (config.rendering.maxCustomRenderBytes). */
const DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024;
const RENDER_API_TIMEOUT_MS = 30_000;
/** How much of an error answer's body is read, for the run's error message. */
const ERROR_BODY_BYTES = 256;

export interface FlowRenderApiDeps {
  db: DataSource;
  storage: ArtefactStorage;
  outboundAllowlist: string[];
  /** Largest answer read from the API (CUSTOM_RENDER_MAX_BYTES); past it the run fails with ERR_LIMIT_010. */
  maxResponseBytes?: number;
}

/**
 * `custom_api`: POSTs the validated payload (its JSON, as the body) to `renderConfig.url`, signed
 * like a webhook when `renderConfig.secret` is set (`X-Service-Signature: v1=…` over
 * `<timestamp>.<body>`). The answer is the document itself (application/pdf or the xlsx type) or
 * JSON `{url}` naming one, fetched through the same outbound guard. Every answer is read with a
 * byte cap while it streams: one that says (Content-Length) or turns out to be larger stops being
 * read and fails the run at once (ERR_LIMIT_010, not retried). Main task queue.
 */
export function createFlowRenderApiActivity(deps: FlowRenderApiDeps) {
  const guard = createOutboundGuard(deps.outboundAllowlist, { timeoutMs: RENDER_API_TIMEOUT_MS });
  const maxBytes = deps.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return async function callFlowRenderApi(input: { runId: string }): Promise<{ artefactKey: string }> {
    const { run, gate } = await loadRun(deps.db, input.runId);
    if (run.artefactKey) return { artefactKey: run.artefactKey };
    const config = gate.renderConfig ?? {};
    if (typeof config.url !== 'string') throw new AppError('ERR_VALID_005', 'renderConfig.url is required for custom_api rendering');
    const body = JSON.stringify(run.inputPayload);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: `${CONTENT_TYPES.pdf}, ${CONTENT_TYPES.xlsx}, application/json`,
      'User-Agent': USER_AGENTS.flow,
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Event-Id': run.id,
      'X-Service-Event-Type': 'flow.run.render',
    };
    if (typeof config.secret === 'string' && config.secret) headers['X-Service-Signature'] = webhookSignature(config.secret, timestamp, body);

    const res = await guard.guardedFetch(config.url, { method: 'POST', headers, body }).catch(permanentIfRefused);
    let doc = await readDocument(res, true, maxBytes);
    if ('url' in doc) {
      const linked = await guard.guardedFetch(doc.url, { method: 'GET' }).catch(permanentIfRefused);
      doc = await readDocument(linked, false, maxBytes);
      if ('url' in doc) throw new Error('The document URL answered JSON, not a document');
    }
    const key = flowArtefactKey(run.projectId, run.id, doc.ext);
    await deps.storage.put(key, doc.body, doc.contentType);
    await setRunArtefact(deps.db, run.id, key);
    return { artefactKey: key };
  };
}

function permanentIfRefused(err: unknown): never {
  if (err instanceof AppError && err.code === 'ERR_OUTBOUND_001' && err.relatedInfo?.reason !== 'unresolvable') throw err;
  const e = err as { name?: string; cause?: { code?: string } };
  throw new Error(`Render API unreachable: ${e?.cause?.code ?? e?.name ?? String(err)}`);
}

type ReadDocument = { body: Buffer; contentType: string; ext: 'pdf' | 'xlsx' } | { url: string };

function tooLarge(maxBytes: number, declared?: number): AppError {
  const said = declared === undefined ? '' : ` (its Content-Length says ${declared})`;
  return new AppError('ERR_LIMIT_010', `Render API response exceeds the limit of ${maxBytes} bytes${said}`, { limit: maxBytes });
}

/**
 * The body, read chunk by chunk and never past `maxBytes`: a declared Content-Length over the cap
 * is refused before reading, and a body that grows past it is cancelled (the connection closes)
 * once it does. With `truncate`, the first `maxBytes` are returned instead of an error.
 */
async function readCapped(res: Response, maxBytes: number, { truncate = false } = {}): Promise<Buffer> {
  const declared = res.headers.get('content-length');
  if (!truncate && declared !== null && Number(declared) > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(maxBytes, Number(declared));
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.byteLength > maxBytes) {
        if (!truncate) throw tooLarge(maxBytes);
        chunks.push(Buffer.from(value.buffer, value.byteOffset, maxBytes - total));
        total = maxBytes;
        break;
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      total += value.byteLength;
    }
  } finally {
    // Stops the transfer when we stopped early (cap reached, error); a no-op after the last chunk.
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks, total);
}

async function readDocument(res: Response, allowUrl: boolean, maxBytes: number): Promise<ReadDocument> {
  if (!res.ok) {
    const text = (await readCapped(res, ERROR_BODY_BYTES, { truncate: true }).catch(() => Buffer.alloc(0))).toString('utf8').replace(/\s+/g, ' ').trim();
    throw new Error(`Render API answered HTTP ${res.status}${text ? `: ${text}` : ''}`);
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (allowUrl && type === 'application/json') {
    let json: { url?: unknown } | null = null;
    try {
      json = JSON.parse((await readCapped(res, maxBytes)).toString('utf8')) as { url?: unknown } | null;
    } catch (err) {
      if (err instanceof AppError) throw err;
    }
    if (!json || typeof json.url !== 'string') throw new Error('Render API answered JSON without a `url`');
    return { url: json.url };
  }
  const ext = type === CONTENT_TYPES.pdf ? 'pdf' : type === CONTENT_TYPES.xlsx ? 'xlsx' : undefined;
  if (!ext) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`Render API answered ${type || 'no content type'}, not a PDF or XLSX document`);
  }
  const body = await readCapped(res, maxBytes);
  if (body.length === 0) throw new Error('Render API answered an empty document');
  return { body, contentType: CONTENT_TYPES[ext], ext };
}
