/**
 * The file of a csv datasource (docs/reporting.md "csv"): where an upload is kept and how large a
 * file (upload or url) and one record may be. Shared by the upload route and the runner.
 */

/** Largest CSV file, uploaded or read from a url (bytes). */
export const CSV_MAX_BYTES = 50 * 1024 * 1024;

/** Largest record of a file (characters): one hostile field cannot hold the parser's memory. */
export const CSV_MAX_RECORD_CHARS = 1024 * 1024;

/** Where an uploaded file lives: `reporting/<projectId>/datasources/<id>/source.csv`. */
export const csvSourceKey = (projectId: string, datasourceId: string) => `reporting/${projectId}/datasources/${datasourceId}/source.csv`;
