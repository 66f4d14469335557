import type { TemplateDefinition } from '../templates/template.types';
import type { OutputOptions } from './output';

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
  /** What is done to the printed PDF (domain/documents/output.ts), checked when the preview was asked for. */
  output?: OutputOptions;
  /** An `excel` preview answered as the workbook's grid (WorkbookGrid, JSON) instead of the file. */
  view?: 'grid';
}

/** The render activity's input: where the request is and how to render it. */
export interface PreviewRenderInput {
  previewId: string;
  projectId: string;
}

export interface PreviewRenderOutput {
  key: string;
  contentType: string;
  /** `json`: a workbook's grid (`view: 'grid'`). */
  fileExtension: 'pdf' | 'xlsx' | 'png' | 'zip' | 'json';
  pageCount?: number;
}

/** Where a preview's request and its file are kept while it renders; the API deletes both. */
export const previewKeys = (projectId: string, previewId: string) => ({
  request: `previews/${projectId}/${previewId}/request.json`,
  file: `previews/${projectId}/${previewId}/file`,
});

/**
 * What a workbook preview answers (POST /api/templates/:id/preview/grid; docs/templates.md
 * "Preview"): the first sheets, rows and columns of the built workbook, as Excel shows them.
 */
export const GRID_LIMITS = { sheets: 20, rows: 500, columns: 50, cellText: 1000 } as const;

export interface WorkbookGrid {
  sheets: GridSheet[];
  /** More sheets than GRID_LIMITS.sheets: only the first are here. */
  truncated: boolean;
}

export interface GridSheet {
  name: string;
  /** The sheet's size in the file; `rows` holds at most GRID_LIMITS.rows of them. */
  rowCount: number;
  columnCount: number;
  /** The file has rows or columns past the limits. */
  truncated: boolean;
  /** Each shown column's width in characters (null: Excel's default). */
  columns: Array<number | null>;
  rows: Array<{ row: number; height?: number; cells: GridCell[] }>;
}

export interface GridCell {
  /** 1 is column A. */
  column: number;
  /** The value as its number format shows it. */
  text: string;
  bold?: boolean;
  italic?: boolean;
  /** CSS colours (#rrggbb). */
  color?: string;
  fill?: string;
  align?: 'left' | 'center' | 'right';
}
