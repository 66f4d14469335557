import { AppError } from './errors';
import type { SqlConnectionConfig } from './query-runner';

/**
 * Whether the server may be sent the password itself (docs/reporting.md "Config"): a server asking
 * for it (PostgreSQL AuthenticationCleartextPassword; MySQL `mysql_clear_password`, `sha256_password`,
 * `caching_sha2_password` full authentication) gets it only when the datasource
 * allows it (`allowCleartextPassword`) or over `verify-full` TLS (the certificate proves the server is
 * the configured host, which cannot change without the password: docs/security.md "Reporting
 * datasources: secrets tied to their target"). SCRAM and MD5 never send the password itself.
 */
export const mayRevealPassword = (config: SqlConnectionConfig): boolean => config.allowCleartextPassword === true || config.ssl === 'verify-full';

/** A server asked for the password in clear and the datasource does not allow it: nothing was sent. */
export const cleartextRefused = () =>
  new AppError('ERR_QRY_006', 'The database server asked for the password in clear text; this datasource does not allow that (config.allowCleartextPassword, or ssl verify-full)', { dbCode: 'CLEARTEXT_PASSWORD_REFUSED' });
