/**
 * Custom search attributes every Formwork workflow may carry, so operators can find a job, a batch
 * or a run in the Temporal Web UI (e.g. `FormworkProjectId = "…"`). Registered by the dev server
 * launcher and, against a real cluster, by the worker at start-up.
 */
export const SEARCH_ATTRIBUTES = {
  FormworkProjectId: 'Keyword',
  FormworkKind: 'Keyword',
  FormworkEntityId: 'Keyword',
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;

export function searchAttributeArgs(): string[] {
  return Object.entries(SEARCH_ATTRIBUTES).flatMap(([k, t]) => ['--search-attribute', `${k}=${t}`]);
}
