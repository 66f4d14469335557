/**
 * The error catalogue (every code the service answers with, its status, whether retrying can help,
 * its default message) and AppError live in `@formwork/wire` (packages/wire/src/errors.ts): the
 * reporting agent throws and reports the same codes. The server imports them from here.
 */
export { AppError, ERRORS, errorBody, isErrorCode, isRetryable, type ErrorCode } from '@formwork/wire';
