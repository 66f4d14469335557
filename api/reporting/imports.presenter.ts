import type { ImportEntity } from '../../db/reporting/import.entity';

/** An import (docs/reporting.md "Imports"); lists leave out the items. */
export function presentImport(i: ImportEntity, options: { withItems?: boolean } = {}) {
  return {
    id: i.id,
    shortId: i.shortId,
    format: i.format,
    filename: i.filename,
    status: i.status,
    dryRun: i.dryRun,
    ...(options.withItems === false ? { itemCount: i.items.length } : { items: i.items }),
    createdAt: new Date(i.createdAt).toISOString(),
  };
}
