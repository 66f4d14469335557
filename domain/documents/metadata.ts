import { AppError } from '../errors';

/** Spec "Metadata": flat, at most 10 KB, values string, number, boolean or null. */
const METADATA_MAX_BYTES = 10 * 1024;

export type Metadata = Record<string, string | number | boolean | null>;

export function checkMetadata(value: unknown, field = 'metadata'): Metadata | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('ERR_VALID_001', `${field} must be a flat object`, { field });
  }
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v)) {
      throw new AppError('ERR_VALID_001', `${field}.${key} must be a string, number, boolean or null`, { field: `${field}.${key}` });
    }
  }
  if (Buffer.byteLength(JSON.stringify(value)) > METADATA_MAX_BYTES) {
    throw new AppError('ERR_VALID_001', `${field} must be at most 10 KB`, { field });
  }
  return value as Metadata;
}

/** Batch metadata applies to every document; a document's own keys win. */
export function mergeMetadata(batch?: Metadata, own?: Metadata, field = 'metadata'): Metadata | undefined {
  if (!batch && !own) return undefined;
  return checkMetadata({ ...batch, ...own }, field);
}
