import { proxyActivities } from '@temporalio/workflow';
import type { PreviewActivities } from '../../activities/rendering/render-preview.activity';
import type { PreviewRenderInput, PreviewRenderOutput } from '../../domain/documents/previews';
import { RETRY } from '../shared/retry-policies';

export interface RenderPreviewInput extends PreviewRenderInput {
  /** `<prefix>-render`: where renderPreview runs (the render worker role). */
  renderTaskQueue: string;
  /** The render's deadline; the API waits a little longer. */
  timeoutMs: number;
}

/**
 * One preview the API waits for (a template's draft or a report's output), id `render-preview-<uuid>`:
 * one attempt of `renderPreview` on the render task queue (activities/rendering/render-preview.activity.ts),
 * its answer the workflow's result. Nothing is retried: the person who asked sees the error and asks
 * again. The API terminates the workflow when its own deadline passes (platform/worker-previews.ts).
 */
export async function renderPreviewWorkflow(input: RenderPreviewInput): Promise<PreviewRenderOutput> {
  const { renderTaskQueue, timeoutMs, ...preview } = input;
  const { renderPreview } = proxyActivities<PreviewActivities>({
    taskQueue: renderTaskQueue,
    scheduleToCloseTimeout: timeoutMs,
    heartbeatTimeout: '10 seconds',
    retry: RETRY.renderPreview,
  });
  return renderPreview(preview);
}
