/**
 * The file of a csv datasource (docs/reporting.md "csv"): where an upload is kept and how large a
 * file (upload or url) and one record may be. Shared by the upload route and the runner.
 */

/** Largest CSV file, uploaded or read from a url (bytes). */
export const CSV_MAX_BYTES = 50 * 1024 * 1024;

/** Largest record of a file (characters): one hostile field cannot hold the parser's memory. */
export const CSV_MAX_RECORD_CHARS = 1024 * 1024;

/**
 * What a `transform` reads: every record is kept in memory until the transform runs (in the
 * evaluation workers), so the records it may take are capped while they are read, not after the
 * file is parsed: at most this many records, and at most this many bytes counted as the records'
 * characters plus TRANSFORM_FIELD_OVERHEAD per field (a 5 MB file of one-character fields is 2.6 M
 * records, hundreds of MB as JavaScript arrays). Past either cap the query fails with ERR_QRY_010.
 */
export const TRANSFORM_MAX_RECORDS = 100_000;
export const TRANSFORM_MAX_BYTES = 8 * 1024 * 1024;
export const TRANSFORM_FIELD_OVERHEAD = 16;

/** Where an uploaded file lives: `reporting/<projectId>/datasources/<id>/source.csv`. */
export const csvSourceKey = (projectId: string, datasourceId: string) => `reporting/${projectId}/datasources/${datasourceId}/source.csv`;
