/**
 * The textual form of a UUID (any version, either case), as the ids of the database's rows are
 * written. A path or body reference is tried as an id only when it has this shape; anything else is
 * a shortId, a slug or not found, never a query that PostgreSQL refuses for its `uuid` type.
 */
export const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

const UUID = new RegExp(`^${UUID_PATTERN}$`);

export const isUuid = (value: string): boolean => UUID.test(value);
