import type Joi from 'joi';
import { AppError, type ErrorCode } from './errors';

/** One problem of a request, as `relatedInfo.errors` lists it (docs/errors.md "Validation errors"). */
interface RequestProblem {
  /** Dotted path of the field (`variables.total`, `items.2.name`); '' for the body itself. */
  path: string;
  code: ErrorCode;
  message: string;
}

/**
 * The one validation policy of request bodies and queries (docs/errors.md "Validation errors"):
 * every problem is listed in `relatedInfo.errors` (`path`, `code`, `message`), the first one is the
 * answer's `code` and `message` (and `relatedInfo.field`, kept for older clients). A missing
 * required field is `ERR_VALID_005`, anything else `ERR_VALID_001`, unless `codes` maps the field
 * (or the Joi error type) to the spec's own code for it. Unknown fields are refused
 * (docs/errors.md): a misspelt field fails loudly instead of being silently dropped.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown, codes: Readonly<Record<string, ErrorCode>> = {}): T {
  const { value: out, error } = schema.validate(value ?? {}, { abortEarly: false, convert: true, allowUnknown: false, stripUnknown: false });
  if (error) {
    const problems = error.details.map((d): RequestProblem => {
      const path = d.path.join('.');
      return { path, code: problemCode(d.type, path, codes), message: d.message.replace(/"/g, "'") };
    });
    throw validationError(problems);
  }
  return out as T;
}

function problemCode(type: string, path: string, codes: Readonly<Record<string, ErrorCode>>): ErrorCode {
  if (codes[type]) return codes[type];
  if (type === 'any.required') return 'ERR_VALID_005';
  return (path && codes[path]) || 'ERR_VALID_001';
}

/** The answer for a list of problems (at least one): the first one's code and message, every one in `relatedInfo.errors`. */
function validationError(problems: RequestProblem[]): AppError {
  const [first] = problems;
  return new AppError(first.code, first.message, { ...(first.path ? { field: first.path } : {}), errors: problems });
}
