import { randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import type { RenderedDocument } from '../adapters/rendering/render-document';
import { previewKeys, type PreviewRenderOutput, type PreviewRequest } from '../domain/documents/previews';
import { AppError } from '../domain/errors';
import { workflowIds } from '../domain/temporal-names';
import type { Services } from './services';
import { startWorkflow } from './start-workflow';
import { awaitAnswer } from './workflow-answer';

/** A preview's answer: the file, or (`view: 'grid'`) the workbook's grid as JSON. */
export type PreviewDocument = Omit<RenderedDocument, 'fileExtension'> & { fileExtension: PreviewRenderOutput['fileExtension'] };

/** Renders a preview and answers the file; where it renders is the caller's choice of implementation. */
export type PreviewRenderer = (request: PreviewRequest) => Promise<PreviewDocument>;

/**
 * A render's own deadline: Chromium's content and print timeouts (30 s + 60 s,
 * adapters/rendering/chromium-page.ts) and the evaluation of calculated variables fit within it.
 */
const RENDER_TIMEOUT_MS = 120_000;
/** How much longer than the render's deadline the API waits (workflow and activity tasks being picked up). */
const WAIT_EXTRA_MS = 15_000;

type PreviewServices = Pick<Services, 'temporal' | 'taskQueues' | 'storage'>;

/**
 * Previews rendered by the render worker role (docs/architecture.md "Previews"; issue 29): a
 * `renderPreviewWorkflow` per preview, whose one activity renders on the render task queue, so
 * a template's Chromium page and its memory never belong to the process that serves HTTP. The
 * request and the file go through artefact storage and are deleted once the answer is read. No
 * render worker answering within the deadline is 503 ERR_INTERNAL_002 (retryable).
 */
export function workerPreviews(services: PreviewServices): PreviewRenderer {
  return async (request) => {
    const previewId = randomUUID();
    const keys = previewKeys(request.tenant, previewId);
    const workflowId = workflowIds.renderPreview(previewId);
    try {
      await services.storage.put(keys.request, Buffer.from(JSON.stringify(request)), 'application/json');
      await startWorkflow(services.temporal, 'renderPreviewWorkflow', {
        taskQueue: services.taskQueues.main,
        workflowId,
        args: [{ previewId, projectId: request.tenant, renderTaskQueue: services.taskQueues.render, timeoutMs: RENDER_TIMEOUT_MS }],
        kind: 'render-preview',
        projectId: request.tenant,
        entityId: previewId,
      });
      const late = () => new AppError('ERR_INTERNAL_002', `The preview was not rendered within ${Math.round((RENDER_TIMEOUT_MS + WAIT_EXTRA_MS) / 1000)} s; try again`, { retryAfter: 10 });
      const out = await awaitAnswer<PreviewRenderOutput>(services.temporal, workflowId, RENDER_TIMEOUT_MS + WAIT_EXTRA_MS, late);
      const body = await buffer((await services.storage.get(out.key)).body);
      return { body, contentType: out.contentType, fileExtension: out.fileExtension, ...(out.pageCount !== undefined ? { pageCount: out.pageCount } : {}) };
    } finally {
      await Promise.all([services.storage.delete(keys.request), services.storage.delete(keys.file)]).catch(() => undefined);
    }
  };
}
