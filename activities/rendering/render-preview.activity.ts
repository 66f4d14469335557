import { Context } from '@temporalio/activity';
import { text } from 'node:stream/consumers';
import { previewKeys, type PreviewRenderInput, type PreviewRenderOutput, type PreviewRequest } from '../../domain/documents/previews';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { renderDocument, renderWorkbookGrid, type RenderDeps } from '../../adapters/rendering/render-document';
import { withHeartbeat } from '../heartbeat';

export interface PreviewActivityDeps extends Omit<RenderDeps, 'pdfRenderer'> {
  storage: ArtefactStorage;
  pdfRenderer: () => RenderDeps['pdfRenderer'];
}

/** Heartbeats carry the workflow's cancellation (an API that stopped waiting terminates it). */
const HEARTBEAT_MS = 2000;

/**
 * `renderPreview`, the render task queue's answer to a preview the API waits for (template and
 * report previews; docs/architecture.md "Previews"): the render, its Chromium page and its memory
 * belong to the render worker role, never to the process that serves HTTP. The request is read
 * from storage and the file written there; the API reads it once and deletes both.
 */
export function createPreviewActivities(deps: PreviewActivityDeps) {
  return {
    async renderPreview(input: PreviewRenderInput): Promise<PreviewRenderOutput> {
      const keys = previewKeys(input.projectId, input.previewId);
      const request = JSON.parse(await text((await deps.storage.get(keys.request)).body)) as PreviewRequest;
      const ctx = Context.current();
      return withHeartbeat(() => ctx.heartbeat(), HEARTBEAT_MS, async () => {
        const { storage, pdfRenderer, ...render } = deps;
        if (request.view === 'grid') {
          const grid = await renderWorkbookGrid({ ...render, pdfRenderer: pdfRenderer() }, { ...request, tenant: input.projectId, signal: ctx.cancellationSignal });
          await storage.put(keys.file, Buffer.from(JSON.stringify(grid)), 'application/json');
          return { key: keys.file, contentType: 'application/json', fileExtension: 'json' };
        }
        const doc = await renderDocument({ ...render, pdfRenderer: pdfRenderer() }, { ...request, tenant: input.projectId, signal: ctx.cancellationSignal });
        await storage.put(keys.file, doc.body, doc.contentType);
        return { key: keys.file, contentType: doc.contentType, fileExtension: doc.fileExtension, ...(doc.pageCount !== undefined ? { pageCount: doc.pageCount } : {}) };
      });
    },
  };
}

export type PreviewActivities = ReturnType<typeof createPreviewActivities>;
