/** The spec's `meta` of a paged list (`{data, meta}`), as every list route and MCP list tool answers it. */
export function pageMeta(total: number, page: number, limit: number) {
  const totalPages = Math.ceil(total / limit);
  return { total, page, limit, totalPages, hasNextPage: page < totalPages, hasPreviousPage: page > 1 };
}

/** `pageMeta`'s JSON Schema: OpenAPI's components.schemas.PageMeta and the MCP list tools' output schemas. */
export const PAGE_META_SCHEMA = {
  type: 'object',
  properties: {
    total: { type: 'integer' },
    page: { type: 'integer' },
    limit: { type: 'integer' },
    totalPages: { type: 'integer' },
    hasNextPage: { type: 'boolean' },
    hasPreviousPage: { type: 'boolean' },
  },
  required: ['total', 'page', 'limit', 'totalPages', 'hasNextPage', 'hasPreviousPage'],
};
