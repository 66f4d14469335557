import { createContext } from 'react';

/**
 * What the page around the designer offers and wants to hear (web/src/designer/Designer.tsx
 * TemplateDesigner): the dashboard links back to the template's page and uploads pictures as the
 * project's assets; the designer in another site's page (web/src/embed, docs/embedding.md) does
 * neither and tells its parent page of every save and publish.
 */
export interface DesignerHost {
  /** "Back to the template" (the dashboard's template page). */
  backLink: boolean;
  /** "Upload a picture" beside an image's source (POST /api/assets). */
  uploads: boolean;
  /** After each draft the API saved. */
  onSaved?: (saved: { templateId: string; savedAt: string }) => void;
  /** After "Publish version" published. */
  onPublished?: (published: { templateId: string; version: number; versionId: string; publishedAt: string }) => void;
}

export const DesignerHostContext = createContext<DesignerHost>({ backLink: true, uploads: true });
