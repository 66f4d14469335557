import type { TemplateDefinition } from '../templates/template.types';

/**
 * Previews rendered on the render worker (docs/architecture.md "Previews"): a template's draft or a
 * report's output, rendered for the person who asked and never kept. What the API hands over and
 * gets back travels through artefact storage, not through Temporal payloads (a template and its
 * sample data can be larger than a payload may be).
 */
export interface PreviewRequest {
  tenant: string;
  template: TemplateDefinition;
  variables: Record<string, unknown>;
  format: 'pdf' | 'excel';
  watermark: boolean;
  title?: string;
}

/** The render activity's input: where the request is and how to render it. */
export interface PreviewRenderInput {
  previewId: string;
  projectId: string;
}

export interface PreviewRenderOutput {
  key: string;
  contentType: string;
  fileExtension: 'pdf' | 'xlsx';
  pageCount?: number;
}

/** Where a preview's request and its file are kept while it renders; the API deletes both. */
export const previewKeys = (projectId: string, previewId: string) => ({
  request: `previews/${projectId}/${previewId}/request.json`,
  file: `previews/${projectId}/${previewId}/file`,
});
