import type { DataSource, EntityManager } from 'typeorm';
import type { GateEntity } from '../../db/flow/gate.entity';
import { findTemplate } from '../../db/templates/template-lookup';
import type { TemplateEntity } from '../../db/templates/template.entity';
import { AppError } from '../../domain/errors';
import { variablesToSchema } from '../../domain/flow/import-variables';
import { putGateSchema, type GateDeps } from './gates.service';

/**
 * Where gates meet templates: a native-render gate names a template of its workspace, and
 * import-schema turns a template's variables into a schema version. Templates are looked up the
 * templates domain's way (id, shortId or slug; deleted and foreign templates are not found).
 */

async function lookup(db: DataSource | EntityManager, projectId: string, ref: string, what: string): Promise<TemplateEntity> {
  try {
    return await findTemplate(db, projectId, ref);
  } catch (err) {
    if ((err as AppError).code === 'ERR_TMPL_001') throw new AppError('FLOW.TEMPLATE_NOT_FOUND', `${what} not found`, { templateId: ref });
    throw err;
  }
}

/** The id (UUID) of the render template a gate names; stored as the id, so a renamed slug cannot break it. */
export async function resolveRenderTemplate(db: DataSource | EntityManager, projectId: string, ref: string): Promise<string> {
  return (await lookup(db, projectId, ref, 'Render template')).id;
}

/** POST /gates/:id/import-schema: the template's (draft) variables become the gate's next schema version. */
export async function importGateSchema(deps: GateDeps, projectId: string, gateRef: string, templateRef: string): Promise<GateEntity> {
  const template = await lookup(deps.db, projectId, templateRef, 'Template');
  const variables = template.draft?.variables ?? [];
  if (variables.length === 0) throw new AppError('FLOW.TEMPLATE_HAS_NO_VARIABLES', undefined, { templateId: template.id });
  return putGateSchema(deps, projectId, gateRef, { schema: variablesToSchema(variables) }, 'import', template.id);
}
