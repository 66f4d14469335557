import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Role } from '../../domain/identity/roles';
import type { TestApp } from './app';

/** Creates a key through the API as `token` (in the project X-Team-Id names, if any) and returns the body. */
export async function createKey(
  app: TestApp,
  token: string,
  body: Record<string, unknown> = { name: `key ${randomBytes(3).toString('hex')}` },
  teamId?: string,
): Promise<any> {
  const res = await app.request('POST', '/api/api-keys', { token, body, headers: teamId ? { 'X-Team-Id': teamId } : {} });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * A team project with the given members. Inserted directly: project endpoints belong to another
 * domain, and these tests only need memberships to exist, as the guards read them.
 */
export async function addTeamProject(db: DataSource, ownerId: string, members: Array<{ userId: string; role: Exclude<Role, 'owner'> }> = []): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO projects (id, name, slug, is_personal, owner_id) VALUES ($1, $2, $3, false, $4)`, [id, 'Team', `team-${id}`, ownerId]);
  await db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'owner')`, [id, ownerId]);
  for (const m of members) await db.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [id, m.userId, m.role]);
  return id;
}

/** Every `table.column` of the public schema whose text form contains `needle` (any column type). */
export async function findInDatabase(db: DataSource, needle: string): Promise<string[]> {
  const columns: Array<{ table_name: string; column_name: string }> = await db.query(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'`,
  );
  const hits: string[] = [];
  for (const { table_name: table, column_name: column } of columns) {
    const [row] = await db.query(`SELECT count(*)::int AS n FROM "${table}" WHERE strpos("${column}"::text, $1) > 0`, [needle]);
    if (row.n > 0) hits.push(`${table}.${column}`);
  }
  return hits;
}
