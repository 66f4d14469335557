import { AppError } from '../../domain/errors';

/**
 * The system maximums of a query's `timeoutSeconds` and `maxRows` (REPORTING_QUERY_TIMEOUT_SECONDS,
 * REPORTING_MAX_ROWS; docs/reporting.md "Limits"). Bodies are shaped by Joi up to the settings' own bounds; the
 * services check values against this deployment's settings here, so raising a setting needs no
 * code change.
 */
export interface SystemLimits {
  queryTimeoutSeconds: number;
  maxRows: number;
}

/**
 * A datasource's `defaults` when not given (docs/reporting.md "Limits": 60 s, 10,000 rows), never above the system
 * maximums.
 */
export const defaultQueryLimits = (system: SystemLimits) => ({ timeoutSeconds: Math.min(60, system.queryTimeoutSeconds), maxRows: Math.min(10_000, system.maxRows) });

/** 400 ERR_VALID_001 naming the field (`<prefix>timeoutSeconds`, `<prefix>maxRows`) over the system maximum. */
export function checkQueryLimits(given: { timeoutSeconds?: number; maxRows?: number } | undefined, system: SystemLimits, prefix = ''): void {
  if (given?.timeoutSeconds !== undefined && given.timeoutSeconds > system.queryTimeoutSeconds) {
    throw new AppError('ERR_VALID_001', `${prefix}timeoutSeconds must be at most ${system.queryTimeoutSeconds} (REPORTING_QUERY_TIMEOUT_SECONDS)`, {
      field: `${prefix}timeoutSeconds`,
      limit: system.queryTimeoutSeconds,
    });
  }
  if (given?.maxRows !== undefined && given.maxRows > system.maxRows) {
    throw new AppError('ERR_VALID_001', `${prefix}maxRows must be at most ${system.maxRows} (REPORTING_MAX_ROWS)`, { field: `${prefix}maxRows`, limit: system.maxRows });
  }
}
