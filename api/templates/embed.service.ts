import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { findTemplate } from '../../db/templates/template-lookup';
import { AppError } from '../../domain/errors';
import type { Principal } from '../../domain/identity/principal';
import { randomBase62, sha256Hex } from '../../domain/signing';
import type { CredentialResolver } from '../middleware/authenticate';
import type { Scope } from '../middleware/guards';
import type { MintEmbedTokenInput } from './embed.schema';

/**
 * Embed tokens (docs/embedding.md): `fmed_` + 40 base62 characters, stored as their SHA-256 only.
 * Each is scoped to one template, a mode (`edit` or `view`) and the one origin whose page may frame
 * the designer; it works until `expiresAt` and while that origin is still on the project's list.
 */
const EMBED_TOKEN_PREFIX = 'fmed_';

function looksLikeEmbedToken(token: string): boolean {
  return token.startsWith(EMBED_TOKEN_PREFIX);
}

export type EmbedPrincipal = Principal & { kind: 'embed' };

export async function embedOrigins(db: DataSource, projectId: string): Promise<string[]> {
  const [row]: Array<{ embed_origins: string[] }> = await db.query(`SELECT embed_origins FROM projects WHERE id = $1 AND deleted_at IS NULL`, [projectId]);
  return row?.embed_origins ?? [];
}

export async function setEmbedOrigins(db: DataSource, projectId: string, origins: string[]): Promise<string[]> {
  await db.query(`UPDATE projects SET embed_origins = $2, updated_at = now() WHERE id = $1`, [projectId, origins]);
  return origins;
}

export interface MintedEmbedToken {
  token: string;
  url: string;
  expiresAt: string;
  mode: 'edit' | 'view';
  origin: string;
  templateId: string;
}

/**
 * Mints a token for one template of the caller's project. The origin is the one given, which must be
 * on the project's list; without one, the list's only origin (a list of several needs the choice).
 */
export async function mintEmbedToken(db: DataSource, publicUrl: string, scope: Scope, ref: string, input: MintEmbedTokenInput): Promise<MintedEmbedToken> {
  const template = await findTemplate(db, scope.projectId, ref);
  const allowed = await embedOrigins(db, scope.projectId);
  let origin = input.origin;
  if (origin === undefined) {
    if (allowed.length !== 1) {
      throw new AppError('ERR_EMBED_004', allowed.length === 0 ? "The project allows no origin to embed the designer: set its list first (PUT /api/teams/:id/embed-origins)" : 'The project allows several origins: name the one that will embed the designer (`origin`)', { field: 'origin', allowed });
    }
    origin = allowed[0];
  } else if (!allowed.includes(origin)) {
    throw new AppError('ERR_EMBED_004', undefined, { field: 'origin', allowed });
  }
  // Spent tokens are kept a day (an expired one still frames its page to say so), then go.
  await db.query(`DELETE FROM embed_tokens WHERE expires_at < now() - interval '1 day'`);
  const token = EMBED_TOKEN_PREFIX + randomBase62(40);
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  await db.query(
    `INSERT INTO embed_tokens (id, project_id, template_id, mode, origin, token_hash, created_by_user, created_by_key, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [randomUUID(), scope.projectId, template.id, input.mode, origin, sha256Hex(token), scope.userId ?? null, scope.apiKeyId ?? null, expiresAt],
  );
  return { token, url: `${publicUrl}/embed/designer/${template.id}?token=${token}`, expiresAt: expiresAt.toISOString(), mode: input.mode, origin, templateId: template.id };
}

interface TokenRow {
  id: string;
  project_id: string;
  template_id: string;
  mode: 'edit' | 'view';
  origin: string;
  created_by_user: string | null;
  live: boolean;
  allowed: boolean;
  minter_ok: boolean;
}

async function tokenRow(db: DataSource, token: string): Promise<TokenRow | undefined> {
  if (!looksLikeEmbedToken(token) || token.length > 100) return undefined;
  const [row]: TokenRow[] = await db.query(
    `SELECT t.id, t.project_id, t.template_id, t.mode, t.origin, t.created_by_user, t.expires_at > now() AS live, t.origin = ANY (p.embed_origins) AS allowed,
            CASE WHEN t.created_by_user IS NOT NULL
                 THEN EXISTS (SELECT 1 FROM memberships m WHERE m.project_id = t.project_id AND m.user_id = t.created_by_user AND m.role IN ('owner', 'admin'))
                 WHEN t.created_by_key IS NOT NULL
                 THEN EXISTS (SELECT 1 FROM api_keys k WHERE k.id = t.created_by_key AND k.is_active AND (k.expires_at IS NULL OR k.expires_at > now()))
                 ELSE true END AS minter_ok
       FROM embed_tokens t JOIN projects p ON p.id = t.project_id AND p.deleted_at IS NULL
      WHERE t.token_hash = $1`,
    [sha256Hex(token)],
  );
  return row;
}

/**
 * `Authorization: Bearer fmed_…` → the `embed` principal. Unknown, expired, its origin off the list, or
 * its minter no longer able to mint (the person no longer an admin of the project, the key revoked or
 * expired): 401 ERR_EMBED_001.
 */
async function resolveEmbedToken(db: DataSource, token: string): Promise<EmbedPrincipal> {
  const row = await tokenRow(db, token);
  if (!row || !row.live || !row.allowed || !row.minter_ok) throw new AppError('ERR_EMBED_001');
  return { kind: 'embed', tokenId: row.id, projectId: row.project_id, templateId: row.template_id, mode: row.mode, origin: row.origin, userId: row.created_by_user ?? undefined };
}

/**
 * The origin that may frame the designer page opened with this token (its `frame-ancestors`), or
 * undefined. An expired token still names it, so the page shows "expired" inside the customer's
 * frame instead of a browser error; the page itself grants nothing.
 */
export async function frameAncestorOf(db: DataSource, token: string | undefined, templateId: string): Promise<string | undefined> {
  if (!token) return undefined;
  const row = await tokenRow(db, token);
  return row && row.allowed && row.template_id === templateId ? row.origin : undefined;
}

export interface EmbedSession {
  templateId: string;
  mode: 'edit' | 'view';
  origin: string;
  expiresAt: string;
}

/** What the embedded page needs to know of its token: the template, the mode, whom to tell, until when. */
export async function embedSession(db: DataSource, p: EmbedPrincipal): Promise<EmbedSession> {
  const [row]: Array<{ expires_at: Date }> = await db.query(`SELECT expires_at FROM embed_tokens WHERE id = $1`, [p.tokenId]);
  return { templateId: p.templateId, mode: p.mode, origin: p.origin, expiresAt: new Date(row?.expires_at ?? Date.now()).toISOString() };
}

/** Resolves `Authorization: Bearer fmed_…` to the `embed` principal (registered by api/app.ts). */
export function embedTokenResolver(db: DataSource): CredentialResolver {
  return { matches: looksLikeEmbedToken, resolve: (token) => resolveEmbedToken(db, token) };
}
