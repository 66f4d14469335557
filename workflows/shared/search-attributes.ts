import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes on every Formwork workflow, so operators find a job, batch or run in the
 * Temporal Web UI with e.g. `FormworkProjectId = "…" AND FormworkKind = "document"`. The dev server
 * launcher registers them; against a real cluster the worker registers them at start-up.
 */
export const SA_PROJECT_ID = defineSearchAttributeKey('FormworkProjectId', SearchAttributeType.KEYWORD);
export const SA_KIND = defineSearchAttributeKey('FormworkKind', SearchAttributeType.KEYWORD);
export const SA_ENTITY_ID = defineSearchAttributeKey('FormworkEntityId', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [SA_PROJECT_ID, SA_KIND, SA_ENTITY_ID];
