import type Joi from 'joi';
import { AppError, type ErrorCode } from './errors';

/**
 * Validates a body or query with Joi. Unknown fields are refused (docs/api-conventions.md): a
 * misspelt field fails loudly instead of being silently dropped. The first problem is reported,
 * with `relatedInfo.field`; `codes` maps a field to the spec's own code for it.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown, codes: Record<string, ErrorCode> = {}): T {
  const { value: out, error } = schema.validate(value ?? {}, { abortEarly: true, convert: true, allowUnknown: false, stripUnknown: false });
  if (error) {
    const d = error.details[0];
    const field = d.path.join('.') || undefined;
    const code = (field && codes[field]) || codes[d.type] || 'ERR_VALID_001';
    throw new AppError(code, d.message.replace(/"/g, "'"), field ? { field } : undefined);
  }
  return out as T;
}
