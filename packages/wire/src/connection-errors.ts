import { AppError } from './errors';

/**
 * Driver codes (`relatedInfo.dbCode` of ERR_QRY_006) that say the connection failed, not the
 * statement: a later attempt may succeed. SQLSTATE class 08, the server shutting down or not yet
 * accepting (57P01-57P03), too many connections (PostgreSQL 53300, MySQL 1040), socket errors, and
 * a SQLite file locked by a writer (SQLITE_BUSY). Shared by the direct query activity and the agent
 * (which reports such a failure `retryable: true`).
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'CONNECT_TIMEOUT',
  'PROTOCOL_CONNECTION_LOST', '57P01', '57P02', '57P03', '53300', '1040', 'SQLITE_BUSY',
]);

/** An ERR_QRY_006 whose dbCode says the connection (not the statement) failed. */
export function isConnectionFailure(err: unknown): err is AppError {
  if (!(err instanceof AppError) || err.code !== 'ERR_QRY_006') return false;
  const dbCode = String(err.relatedInfo?.dbCode ?? '');
  return CONNECTION_CODES.has(dbCode) || dbCode.startsWith('08');
}
