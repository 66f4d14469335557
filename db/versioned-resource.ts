import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager, ObjectLiteral } from 'typeorm';
import type { AppError } from '../domain/errors';
import { nextVersionNumber, restoreNotes, type VersionKey } from '../domain/versions';
import type { Queryable } from './sql';

/**
 * One helper for the resources that keep immutable numbered versions: templates, reporting
 * queries, reports and gate schemas.
 *
 * Common to all four:
 * - a version row is a snapshot that never changes; its number is the parent's counter plus one
 *   (domain/versions.ts), taken while the parent row is locked FOR UPDATE, so concurrent publishes
 *   get consecutive numbers; the unique index (parent, version) is the backstop and is not expected
 *   to fire (a violation would surface as the 500 it is today);
 * - versions are listed whole (no pagination), newest first, except gates (oldest first).
 *
 * Common to templates, queries and reports (`versionedResource` below):
 * - the parent row holds `latest_version`, `is_published`, `published_at`; a version row holds
 *   `id`, `release_notes`, `published_at`, `published_by`, and lists show the publisher's name
 *   (null once their account is gone);
 * - publish: lock, compare the snapshot with the newest version (equal → the resource's 409),
 *   check, write; restore: the old version is written back into the draft and published at once as
 *   the next number, with "Restored from version N" unless release notes are given; the answer is
 *   `{ newVersion, restoredVersion }`.
 *
 * What differs, and is each resource's option or hook:
 * - the columns a version holds (read from the entity's TypeORM metadata) and which of them a
 *   publish compares (templates: definition and formats; queries: definition and datasource;
 *   reports: the pinned definition);
 * - when the draft is checked: templates and queries compare first, then check; reports pin (check
 *   and resolve `latest`) first, because the pinned definition is what is compared;
 * - how a version is named: templates take a number or a version id (other text is 400
 *   ERR_TMPL_023, another template's id 400 ERR_TMPL_014); queries and reports a number only;
 * - what a restore writes back into the draft, and what else a publish records (templates: an
 *   activity entry; reports: the draft as written, beside the pinned definition);
 * - gates use the row helpers only: their counter is `flow_gates.schema_version`, bumped by schema
 *   puts, imports and definition-changing settings edits alike; a schema version has a `source`
 *   instead of a publisher and release notes, and there is no get-one or restore.
 */

/** A version table: the entity whose rows are versions, the parent they belong to. */
export interface VersionTable<V, K extends keyof V & string = keyof V & string> {
  /** Its table and columns are read from TypeORM's metadata, so no SQL here names a column by hand. */
  entity: new () => V;
  /** The property holding the parent's id (`templateId`, `gateId`, …). */
  parentKey: K;
  /** The parents' table; its rows have `project_id` and `deleted_at`. */
  parentTable: string;
}

interface Column {
  prop: string;
  name: string;
  jsonb: boolean;
}

function columnsOf(db: Queryable, table: VersionTable<ObjectLiteral>): { table: string; columns: Column[]; column: (prop: string) => string } {
  const meta = db.getRepository(table.entity).metadata;
  const columns = meta.columns.map((c) => ({ prop: c.propertyName, name: c.databaseName, jsonb: c.type === 'jsonb' }));
  const column = (prop: string) => `"${columns.find((c) => c.prop === prop)?.name ?? prop}"`;
  return { table: meta.tableName, columns, column };
}

// A null jsonb value is SQL NULL (as TypeORM writes it), not the JSON literal `null`.
const valueOf = (c: Column, value: unknown) => (c.jsonb && value != null ? JSON.stringify(value) : (value ?? null));

/** Writes one version row, every column of the entity. */
export async function insertVersionRow<V extends ObjectLiteral>(m: Queryable, table: VersionTable<V>, row: V): Promise<void> {
  const t = columnsOf(m, table);
  const names = t.columns.map((c) => `"${c.name}"`).join(', ');
  const values = t.columns.map((c, i) => `$${i + 1}${c.jsonb ? '::jsonb' : ''}`).join(', ');
  await m.query(`INSERT INTO "${t.table}" (${names}) VALUES (${values})`, t.columns.map((c) => valueOf(c, row[c.prop])));
}

interface Selected<V> {
  version: V;
  /** The publisher's display name; null once their account is gone, or when versions have no publisher. */
  publishedBy: string | null;
  projectId: string;
}

/** Version rows of live parents matching `where` (on alias `v`, columns by property via `col`), ordered by number. */
async function selectVersions<V extends ObjectLiteral>(
  db: Queryable,
  table: VersionTable<V>,
  where: (col: (prop: keyof V & string) => string) => string,
  params: unknown[],
  order: 'ASC' | 'DESC',
): Promise<Array<Selected<V>>> {
  const t = columnsOf(db, table);
  const publisher = t.columns.some((c) => c.prop === 'publishedBy');
  const rows: Array<Record<string, unknown>> = await db.query(
    `SELECT ${t.columns.map((c) => `v."${c.name}" AS "${c.prop}"`).join(', ')}, p.project_id AS "$projectId"${publisher ? ', u.name AS "$publisher"' : ''}
       FROM "${t.table}" v
       JOIN ${table.parentTable} p ON p.id = v.${t.column(table.parentKey)} AND p.deleted_at IS NULL
       ${publisher ? 'LEFT JOIN users u ON u.id = v.published_by' : ''}
      WHERE ${where((prop) => `v.${t.column(prop)}`)}
      ORDER BY v.version ${order}`,
    params,
  );
  return rows.map(({ $projectId, $publisher, ...fields }) => ({
    version: Object.assign(new table.entity(), fields),
    publishedBy: ($publisher as string | null | undefined) ?? null,
    projectId: $projectId as string,
  }));
}

/** Every version of one parent, by number (`ASC` oldest first). */
export async function listVersionRows<V extends ObjectLiteral>(db: Queryable, table: VersionTable<V>, parentId: string, order: 'ASC' | 'DESC'): Promise<V[]> {
  return (await selectVersions(db, table, (col) => `${col(table.parentKey)} = $1`, [parentId], order)).map((s) => s.version);
}

// ---------------------------------------------------------------------------------------------
// Published resources: templates, reporting queries, reports
// ---------------------------------------------------------------------------------------------

/** A parent that counts its published versions. */
export interface VersionParent {
  id: string;
  projectId: string;
  latestVersion: number;
}

/** What every published version row holds besides its snapshot. */
export interface PublishedVersion {
  id: string;
  version: number;
  releaseNotes: string | null;
  publishedAt: Date;
  publishedBy: string | null;
}

export interface VersionRecord<V> {
  version: V;
  /** The publisher's display name; null once their account is gone. */
  publishedBy: string | null;
}

/** The fields of a version a resource gives: everything but the parent key and the bookkeeping. */
export type Snapshot<V, K extends keyof V> = Omit<V, K | keyof PublishedVersion>;

export interface Publisher {
  projectId: string;
  /** Absent for API keys: the version has no publisher. */
  userId?: string;
}

export interface RestoreResult {
  newVersion: number;
  restoredVersion: number;
}

export interface ResourceOptions<P extends VersionParent, V extends PublishedVersion, K extends keyof V & string> extends VersionTable<V, K> {
  /** The live parent of the project; `lock` takes it FOR UPDATE. Not found is the resource's own error. */
  find(db: Queryable, projectId: string, ref: string, lock: boolean): Promise<P>;
  /** The snapshot fields a publish compares with the newest version (as JSON values where jsonb). */
  compared: ReadonlyArray<keyof V & string>;
  /** A publish equal to the newest version (409). */
  unchanged(latestVersion: number): AppError;
  /** The path's `:version` as a key; null is not found (once the parent is found); may throw a 400 of its own. */
  versionKey(param: string): VersionKey | null;
  versionNotFound(param: string): AppError;
  /** A version id of another parent of the same project; not found when not given. */
  otherParent?(param: string, parent: P): AppError;
}

export interface PublishHooks<P, V, K extends keyof V> {
  /** The new version's fields, from the locked parent (may check, as reports' pinning does). */
  snapshot(m: EntityManager, parent: P): Snapshot<V, K> | Promise<Snapshot<V, K>>;
  /** Checks run after the "unchanged" comparison. */
  check?(m: EntityManager, parent: P, snapshot: Snapshot<V, K>): Promise<void>;
  /** Runs in the transaction once the version is written (an activity entry). */
  after?(m: EntityManager, parent: P, version: V): Promise<void>;
}

export interface RestoreHooks<P, V, K extends keyof V> {
  /** Checks the old version still holds, writes it back into the draft, answers the new version's fields. */
  restore(m: EntityManager, parent: P, old: V): Promise<Snapshot<V, K>>;
  after?(m: EntityManager, parent: P, version: V, old: V): Promise<void>;
}

/** Publish, list, get and restore for one published resource. */
export function versionedResource<P extends VersionParent, V extends PublishedVersion & ObjectLiteral, K extends keyof V & string>(options: ResourceOptions<P, V, K>) {
  async function findVersion(m: Queryable, parent: P, key: VersionKey | null, param: string): Promise<VersionRecord<V>> {
    const [row] =
      key === null
        ? []
        : 'id' in key
          ? await selectVersions(m, options, (col) => `${col('id')} = $1`, [key.id], 'DESC')
          : await selectVersions(m, options, (col) => `${col(options.parentKey)} = $1 AND ${col('version')} = $2`, [parent.id, key.number], 'DESC');
    if (!row || row.projectId !== parent.projectId) throw options.versionNotFound(param);
    if (row.version[options.parentKey] !== parent.id) throw options.otherParent ? options.otherParent(param, parent) : options.versionNotFound(param);
    return { version: row.version, publishedBy: row.publishedBy };
  }

  async function publishNext(m: EntityManager, parent: P, actor: Publisher, snapshot: Snapshot<V, K>, releaseNotes: string | null): Promise<V> {
    const now = new Date();
    const version = Object.assign(new options.entity(), snapshot, {
      id: randomUUID(),
      [options.parentKey]: parent.id,
      version: nextVersionNumber(parent.latestVersion),
      releaseNotes,
      publishedAt: now,
      publishedBy: actor.userId ?? null,
    });
    await insertVersionRow(m, options, version);
    await m.query(`UPDATE ${options.parentTable} SET latest_version = $2, is_published = true, published_at = $3 WHERE id = $1`, [parent.id, version.version, now]);
    return version;
  }

  /** Whether the snapshot equals the parent's newest version in every compared field. */
  async function sameAsLatest(m: EntityManager, parent: P, snapshot: Snapshot<V, K>): Promise<boolean> {
    const t = columnsOf(m, options);
    const fields = options.compared.map((prop) => t.columns.find((c) => c.prop === prop)!);
    const equal = fields.map((c, i) => `"${c.name}" = $${i + 3}${c.jsonb ? '::jsonb' : ''}`).join(' AND ');
    const [row]: Array<{ same: boolean }> = await m.query(`SELECT (${equal}) AS same FROM "${t.table}" WHERE ${t.column(options.parentKey)} = $1 AND version = $2`, [
      parent.id,
      parent.latestVersion,
      ...fields.map((c) => valueOf(c, (snapshot as Record<string, unknown>)[c.prop])),
    ]);
    return row?.same === true;
  }

  return {
    /** Publishes the next version; the parent row stays locked until the transaction ends. */
    publish(db: DataSource, actor: Publisher, ref: string, releaseNotes: string | null | undefined, hooks: PublishHooks<P, V, K>): Promise<V> {
      return db.transaction(async (m) => {
        const parent = await options.find(m, actor.projectId, ref, true);
        const snapshot = await hooks.snapshot(m, parent);
        if (parent.latestVersion > 0 && (await sameAsLatest(m, parent, snapshot))) throw options.unchanged(parent.latestVersion);
        await hooks.check?.(m, parent, snapshot);
        const version = await publishNext(m, parent, actor, snapshot, releaseNotes || null);
        await hooks.after?.(m, parent, version);
        return version;
      });
    },

    /** Newest first. */
    async list(db: Queryable, projectId: string, ref: string): Promise<Array<VersionRecord<V>>> {
      const parent = await options.find(db, projectId, ref, false);
      const rows = await selectVersions(db, options, (col) => `${col(options.parentKey)} = $1`, [parent.id], 'DESC');
      return rows.map(({ version, publishedBy }) => ({ version, publishedBy }));
    },

    /** One version and its parent; the `:version` form is checked before the parent is looked up. */
    async get(db: Queryable, projectId: string, ref: string, param: string): Promise<VersionRecord<V> & { parent: P }> {
      const key = options.versionKey(param);
      const parent = await options.find(db, projectId, ref, false);
      return { parent, ...(await findVersion(db, parent, key, param)) };
    },

    /** Publishes an old version again as the next number (the draft takes it too, by the hook). */
    restore(db: DataSource, actor: Publisher, ref: string, param: string, releaseNotes: string | null | undefined, hooks: RestoreHooks<P, V, K>): Promise<RestoreResult> {
      const key = options.versionKey(param);
      return db.transaction(async (m) => {
        const parent = await options.find(m, actor.projectId, ref, true);
        const { version: old } = await findVersion(m, parent, key, param);
        const snapshot = await hooks.restore(m, parent, old);
        const version = await publishNext(m, parent, actor, snapshot, restoreNotes(releaseNotes, old.version));
        await hooks.after?.(m, parent, version, old);
        return { newVersion: version.version, restoredVersion: old.version };
      });
    },
  };
}
