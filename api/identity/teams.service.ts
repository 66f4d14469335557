import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { recordActivity } from '../../db/identity/activity';
import { MembershipEntity } from '../../db/identity/membership.entity';
import { ProjectEntity } from '../../db/identity/project.entity';
import { insertWithFreshCandidates, isUniqueViolation, violatedIndex, type Queryable } from '../../db/sql';
import { AppError } from '../../domain/errors';
import { slugify, uniqueSlug } from '../../domain/identity/slugs';
import type { ProjectRow } from './teams.presenter';

/**
 * Projects (the API's teams). Access was decided by the route's guard before any of these run:
 * they receive the project id the caller may act on and never check roles themselves.
 */

const PROJECT_SELECT = `
  SELECT p.id, p.name, p.slug, p.is_personal AS "isPersonal", p.created_at AS "createdAt", m.role,
         (SELECT count(*)::int FROM memberships c WHERE c.project_id = p.id) AS "memberCount"
    FROM projects p JOIN memberships m ON m.project_id = p.id AND m.user_id = $1
   WHERE p.deleted_at IS NULL`;

/** Every live project the user belongs to: the personal one first, then oldest first. */
export async function listProjects(db: Queryable, userId: string): Promise<ProjectRow[]> {
  return db.query(`${PROJECT_SELECT} ORDER BY p.is_personal DESC, p.created_at, p.id`, [userId]);
}

export async function getProject(db: Queryable, userId: string, projectId: string): Promise<ProjectRow> {
  const [row] = (await db.query(`${PROJECT_SELECT} AND p.id = $2`, [userId, projectId])) as ProjectRow[];
  if (!row) throw new AppError('ERR_TEAM_001');
  return row;
}

async function slugTaken(db: Queryable, slug: string, exceptProjectId?: string): Promise<boolean> {
  const rows = await db.query(`SELECT 1 FROM projects WHERE slug = $1 AND id IS DISTINCT FROM $2`, [slug, exceptProjectId ?? null]);
  return rows.length > 0;
}

export interface CreateProjectInput {
  userId: string;
  name: string;
  /** Given: used as is (taken → ERR_TEAM_002). Omitted: derived from the name. */
  slug?: string;
}

/**
 * Creates a team project with the caller as its owner. A derived slug is the plain slugified name
 * when free (`Acme Docs` → `acme-docs`), else the name plus a random suffix; slugs of deleted
 * projects stay reserved, so old links never point at someone else's project.
 */
export async function createProject(db: DataSource, input: CreateProjectInput): Promise<ProjectEntity> {
  const candidates = input.slug ? [input.slug] : [slugify(input.name), uniqueSlug(input.name), uniqueSlug(input.name)];
  let tried = 0;
  try {
    return await insertWithFreshCandidates(candidates.length, { projects_slug_key: () => void (tried += 1) }, () => insertProject(db, input, candidates[tried]));
  } catch (err) {
    if (violatedIndex(err) !== 'projects_slug_key') throw err;
    throw new AppError('ERR_TEAM_002', input.slug ? `Slug '${input.slug}' is already taken` : undefined, input.slug ? { field: 'slug' } : undefined);
  }
}

async function insertProject(db: DataSource, input: CreateProjectInput, slug: string): Promise<ProjectEntity> {
  const now = new Date();
  const project: ProjectEntity = Object.assign(new ProjectEntity(), {
    id: randomUUID(),
    name: input.name,
    slug,
    isPersonal: false,
    ownerId: input.userId,
    plan: 'free',
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  await db.transaction(async (m) => {
    await m.getRepository(ProjectEntity).insert(project);
    await m.getRepository(MembershipEntity).insert({ projectId: project.id, userId: input.userId, role: 'owner', joinedAt: now });
    await recordActivity(m, { projectId: project.id, userId: input.userId, type: 'project_created', data: { project: { name: project.name, slug } } });
  });
  return project;
}

export interface UpdateProjectInput {
  userId: string;
  projectId: string;
  name?: string;
  slug?: string;
}

/** Renames a project and/or changes its slug; a personal project's slug is fixed (ERR_TEAM_005). */
export async function updateProject(db: DataSource, input: UpdateProjectInput): Promise<ProjectRow> {
  const current = await getProject(db, input.userId, input.projectId);
  const changes: { name?: string; slug?: string } = {};
  if (input.name !== undefined && input.name !== current.name) changes.name = input.name;
  if (input.slug !== undefined && input.slug !== current.slug) {
    if (current.isPersonal) throw new AppError('ERR_TEAM_005', undefined, { field: 'slug' });
    if (await slugTaken(db, input.slug, input.projectId)) throw new AppError('ERR_TEAM_002', `Slug '${input.slug}' is already taken`, { field: 'slug' });
    changes.slug = input.slug;
  }
  if (Object.keys(changes).length === 0) return current;
  try {
    await db.transaction(async (m) => {
      await m.query(`UPDATE projects SET name = COALESCE($2, name), slug = COALESCE($3, slug), updated_at = now() WHERE id = $1`, [
        input.projectId,
        changes.name ?? null,
        changes.slug ?? null,
      ]);
      await recordActivity(m, { projectId: input.projectId, userId: input.userId, type: 'project_updated', data: { changes } });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('ERR_TEAM_002', `Slug '${input.slug}' is already taken`, { field: 'slug' });
    throw err;
  }
  return getProject(db, input.userId, input.projectId);
}

/**
 * Soft delete: the project disappears from every member's list and X-Team-Id stops resolving it.
 * Its pending invitations are cancelled and its API keys deactivated, so nothing keeps acting
 * on a project nobody can see any more.
 */
export async function deleteProject(db: DataSource, input: { userId: string; projectId: string }): Promise<void> {
  const current = await getProject(db, input.userId, input.projectId);
  if (current.isPersonal) throw new AppError('ERR_TEAM_004');
  await db.transaction(async (m) => {
    await m.query(`UPDATE projects SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, [input.projectId]);
    await m.query(`UPDATE invitations SET status = 'cancelled', decided_at = now() WHERE project_id = $1 AND status = 'pending'`, [input.projectId]);
    await m.query(`UPDATE api_keys SET is_active = false, updated_at = now() WHERE project_id = $1 AND is_active`, [input.projectId]);
  });
}
