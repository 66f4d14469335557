import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { GateEntity } from '../../db/flow/gate.entity';
import { GateSchemaVersionEntity } from '../../db/flow/gate-schema-version.entity';
import type { SchemaVersionSource } from '../../domain/flow/gate-settings';
import { ProjectEntity } from '../../db/identity/project.entity';
import { insertVersionRow, listVersionRows } from '../../db/versioned-resource';
import { AppError } from '../../domain/errors';
import { assertNoProblems } from '../../domain/flow/definition-check';
import type { Evaluator } from '../../domain/evaluation';
import { GATE_SHORT_ID_PREFIX, gateSlug, newGateShortId } from '../../domain/flow/flow-ids';
import { isUuid } from '../../domain/ids';
import { insertWithFreshCandidates } from '../../db/sql';
import type { GateValidationDefinition } from '../../domain/flow/gate.types';
import { flowPlan } from '../../domain/flow/plans';
import { randomBase62 } from '../../domain/signing';
import { nextVersionNumber } from '../../domain/versions';
import type { CreateGateInput, GateSettingsInput, ListGatesQuery, UpdateGateInput } from './gates.schema';
import { resolveRenderTemplate } from './gate-templates';
import { resolveGateSecrets } from './gate-secrets';
import { checkGateOutput } from '../../domain/flow/render-output';
import { assertSavedTarget, type OutboundGuard } from '../../adapters/http/outbound';

/**
 * Gates of one workspace (spec, "Flow gates"). Every function takes the caller's project: a gate
 * of another workspace is answered exactly like one that does not exist (404 FLOW.GATE_NOT_FOUND).
 */

export interface GateDeps {
  db: DataSource;
  /** Checks definitions (patterns, rules) in the evaluation workers, within the budget. */
  evaluator: Evaluator;
  /** Checks the gate's outbound targets when they are saved (creating and updating gates only). */
  guard?: OutboundGuard;
}

/**
 * The gate's outbound targets (its delivery channels' URLs and a `custom_api` renderConfig.url)
 * that `before` did not have, checked by the outbound guard when saved, as webhook subscriptions
 * are: an address it refuses is 400 ERR_OUTBOUND_001 naming the field and OUTBOUND_ALLOWLIST.
 * A host that does not resolve now is not refused here (every delivery and render checks it
 * again; docs/flow.md "Delivery channels: checked when saved and when used").
 */
async function checkTargets(deps: GateDeps, gate: Pick<GateEntity, 'deliveryChannels' | 'renderMode' | 'renderConfig'>, before?: Pick<GateEntity, 'deliveryChannels' | 'renderConfig'>): Promise<void> {
  if (!deps.guard) return;
  const known = new Set([...(before?.deliveryChannels ?? []).map((c) => c.url), ...(typeof before?.renderConfig?.url === 'string' ? [before.renderConfig.url] : [])]);
  const targets = gate.deliveryChannels.map((c, i) => ({ url: c.url, field: `deliveryChannels[${i}].url` }));
  if (gate.renderMode === 'custom_api' && typeof gate.renderConfig?.url === 'string') targets.push({ url: gate.renderConfig.url, field: 'renderConfig.url' });
  for (const target of targets) {
    if (!known.has(target.url)) await assertSavedTarget(deps.guard, target);
  }
}

/** 422 FLOW.GATE_VALIDATION_FAILED listing every problem of the definition, if it has any. */
async function checkDefinition(deps: GateDeps, projectId: string, gate: GateEntity): Promise<void> {
  assertNoProblems(await deps.evaluator.check(projectId, 'gateDefinition', definitionOf(gate)));
}

/** The query for a live gate of the project by UUID, shortId (`fgate_…`) or slug; a ref of no such form matches nothing. */
export function gateQuery(db: DataSource | EntityManager, projectId: string, ref: string): SelectQueryBuilder<GateEntity> {
  const qb = db.getRepository(GateEntity).createQueryBuilder('g').where('g.projectId = :projectId AND g.deletedAt IS NULL', { projectId });
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 200) return qb.andWhere('false');
  if (isUuid(ref)) return qb.andWhere('g.id = :ref', { ref });
  if (ref.startsWith(GATE_SHORT_ID_PREFIX)) return qb.andWhere('g.shortId = :ref', { ref });
  return qb.andWhere('g.slug = :ref', { ref: ref.toLowerCase() });
}

/** A live gate of the project by UUID, shortId or slug; another workspace's gate is not found. */
export async function findGate(db: DataSource | EntityManager, projectId: string, ref: string, lock = false): Promise<GateEntity> {
  const qb = gateQuery(db, projectId, ref);
  if (lock) qb.setLock('pessimistic_write');
  const gate = await qb.getOne();
  if (!gate) throw new AppError('FLOW.GATE_NOT_FOUND', undefined, { gateId: ref });
  return gate;
}

async function projectPlan(db: DataSource | EntityManager, projectId: string) {
  const project = await db.getRepository(ProjectEntity).findOneBy({ id: projectId });
  return flowPlan(project?.plan);
}

/** Cross-field rules of the Gate table that Joi cannot see alone, on the gate as it will be. */
async function checkSettings(db: DataSource | EntityManager, projectId: string, gate: GateEntity): Promise<void> {
  if (gate.validationMode === 'freetext' && !gate.freetextConfig) {
    throw new AppError('ERR_VALID_005', "freetextConfig is required when validationMode is 'freetext'", { field: 'freetextConfig' });
  }
  if (gate.approvalMode === 'manual') {
    const config = gate.approvalConfig;
    if (!config) throw new AppError('ERR_VALID_005', "approvalConfig is required when approvalMode is 'manual'", { field: 'approvalConfig' });
    // requiredApprovals counts people: the same address twice (in any case) is one approver.
    const distinct = new Set(config.approvers.map((a) => a.email.trim().toLowerCase())).size;
    if ((config.requiredApprovals ?? 1) > distinct) {
      throw new AppError('ERR_VALID_001', 'requiredApprovals cannot exceed the number of distinct approvers', { field: 'approvalConfig.requiredApprovals' });
    }
    const max = (await projectPlan(db, projectId)).maxApproversPerGate;
    if (max !== null && config.approvers.length > max) throw new AppError('ERR_FLOW_LIMIT_004', undefined, { limit: max });
  }
  if (gate.renderMode === 'native') {
    if (!gate.renderTemplateId) throw new AppError('ERR_VALID_005', "renderTemplateId is required when renderMode is 'native'", { field: 'renderTemplateId' });
    gate.renderTemplateId = await resolveRenderTemplate(db, projectId, gate.renderTemplateId);
  }
  checkGateOutput(gate.renderMode, gate.renderConfig);
}

function definitionOf(gate: Pick<GateEntity, 'validationMode' | 'schema' | 'businessRules' | 'freetextConfig'>): GateValidationDefinition {
  return { validationMode: gate.validationMode, schema: gate.schema, businessRules: gate.businessRules, freetextConfig: gate.freetextConfig };
}

/** Gate schema versions share the version-row helpers; their counter is the gate's `schemaVersion` (db/versioned-resource.ts). */
const GATE_VERSIONS = { entity: GateSchemaVersionEntity, parentKey: 'gateId', parentTable: 'flow_gates' } as const;

async function insertVersion(m: EntityManager, gate: GateEntity, source: SchemaVersionSource, sourceTemplateId: string | null = null): Promise<void> {
  const row = Object.assign(new GateSchemaVersionEntity(), { gateId: gate.id, version: gate.schemaVersion, ...definitionOf(gate), source, sourceTemplateId, createdAt: new Date() });
  await insertVersionRow(m, GATE_VERSIONS, row);
}

function applySettings(gate: GateEntity, input: GateSettingsInput): void {
  for (const [key, value] of Object.entries(input)) {
    if (value !== undefined) (gate as unknown as Record<string, unknown>)[key] = key === 'description' && value === '' ? null : value;
  }
}

/** `inTransaction` runs in the transaction that inserts the gate (the Idempotency-Key's answer, docs/idempotency.md). */
export async function createGate(deps: GateDeps, projectId: string, input: CreateGateInput, inTransaction?: (m: EntityManager, gate: GateEntity) => Promise<void>): Promise<GateEntity> {
  const now = new Date();
  const gate: GateEntity = Object.assign(new GateEntity(), {
    id: randomUUID(),
    projectId,
    shortId: newGateShortId(),
    slug: gateSlug(input.name),
    name: input.name,
    description: null,
    status: 'active',
    validationMode: 'variables',
    schema: input.schema ?? null,
    businessRules: input.businessRules ?? [],
    freetextConfig: null,
    schemaVersion: 1,
    renderMode: 'none',
    renderTemplateId: null,
    renderConfig: null,
    approvalMode: 'auto',
    approvalConfig: null,
    deliveryChannels: [],
    maxSubmissionsPerMinute: null,
    notificationMode: 'digest',
    notificationDigestMinutes: 5,
    circuitBreakerEnabled: true,
    maxFailures: 5,
    cooldownSeconds: 300,
    circuitState: 'closed',
    consecutiveFailures: 0,
    circuitOpenUntil: null,
    circuitTrialRunId: null,
    circuitTrialStartedAt: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  } satisfies GateEntity);
  const { schema: _schema, businessRules: _rules, ...settings } = input;
  applySettings(gate, resolveGateSecrets(undefined, settings));
  await checkSettings(deps.db, projectId, gate);
  await checkTargets(deps, gate);
  await checkDefinition(deps, projectId, gate);

  const freshSlug = () => void (gate.slug = gateSlug(input.name, randomBase62(4).toLowerCase()));
  return insertWithFreshCandidates(6, { flow_gates_project_slug_key: freshSlug }, () =>
    deps.db.transaction(async (m) => {
      // One creator at a time per workspace, so two concurrent creates cannot both pass the plan's gate count.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext('flow-gates:' || $1))`, [projectId]);
      const max = (await projectPlan(m, projectId)).maxGates;
      if (max !== null) {
        const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM flow_gates WHERE project_id = $1 AND deleted_at IS NULL`, [projectId]);
        if (n >= max) throw new AppError('ERR_FLOW_LIMIT_001', undefined, { limit: max });
      }
      // Cast: TypeORM's deep-partial type cannot follow the recursive ObjectSchema jsonb column.
      await m.getRepository(GateEntity).insert(gate as never);
      await insertVersion(m, gate, 'create');
      await inTransaction?.(m, gate);
      return gate;
    }),
  );
}

const SORT_COLUMNS: Record<ListGatesQuery['sortBy'], string> = { createdAt: 'g.createdAt', name: 'LOWER(g.name)', updatedAt: 'g.updatedAt' };

export async function listGates(deps: GateDeps, projectId: string, query: ListGatesQuery): Promise<{ gates: GateEntity[]; total: number }> {
  const order = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const qb = deps.db.getRepository(GateEntity).createQueryBuilder('g').where('g.projectId = :projectId AND g.deletedAt IS NULL', { projectId });
  if (query.status) qb.andWhere('g.status = :status', { status: query.status });
  if (query.search) qb.andWhere(`g.name ILIKE :search ESCAPE '\\'`, { search: `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` });
  qb.orderBy(SORT_COLUMNS[query.sortBy], order).addOrderBy('g.id', order);
  const [gates, total] = await qb.offset((query.page - 1) * query.limit).limit(query.limit).getManyAndCount();
  return { gates, total };
}

export async function getGate(deps: GateDeps, projectId: string, ref: string): Promise<GateEntity> {
  return findGate(deps.db, projectId, ref);
}

/**
 * PUT /gates/:id. A change of validationMode or freetextConfig changes what submissions are
 * checked against, so it makes a new schema version too (source `settings`), and runs keep
 * recording exactly what validated them.
 */
export async function updateGate(deps: GateDeps, projectId: string, ref: string, input: UpdateGateInput): Promise<GateEntity> {
  return deps.db.transaction(async (m) => {
    const gate = await findGate(m, projectId, ref, true);
    const before = JSON.stringify([gate.validationMode, gate.freetextConfig]);
    const wasEnabled = gate.circuitBreakerEnabled;
    const stored = { deliveryChannels: gate.deliveryChannels, renderConfig: gate.renderConfig };
    // Write-only secrets left out (or sent back as `{"set": true}`) keep their stored values.
    applySettings(gate, resolveGateSecrets(gate, input));
    await checkSettings(m, projectId, gate);
    await checkTargets(deps, gate, stored);
    const definitionChanged = JSON.stringify([gate.validationMode, gate.freetextConfig]) !== before;
    if (definitionChanged) {
      await checkDefinition(deps, projectId, gate);
      gate.schemaVersion = nextVersionNumber(gate.schemaVersion);
      await insertVersion(m, gate, 'settings');
    }
    if (wasEnabled && !gate.circuitBreakerEnabled) resetCircuit(gate);
    gate.updatedAt = new Date();
    await m.getRepository(GateEntity).save(gate);
    return gate;
  });
}

/** Switching the breaker off forgets its state, so switching it on again starts closed. */
function resetCircuit(gate: GateEntity): void {
  Object.assign(gate, { circuitState: 'closed', consecutiveFailures: 0, circuitOpenUntil: null, circuitTrialRunId: null, circuitTrialStartedAt: null });
}

export async function deleteGate(deps: GateDeps, projectId: string, ref: string): Promise<void> {
  const gate = await findGate(deps.db, projectId, ref);
  await deps.db.query(`UPDATE flow_gates SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL`, [gate.id]);
}

/** A new schema version from a schema and (optionally) rules; rules not given stay as they are. */
export async function putGateSchema(
  deps: GateDeps,
  projectId: string,
  ref: string,
  change: Pick<GateValidationDefinition, 'schema'> & Partial<Pick<GateValidationDefinition, 'businessRules'>>,
  source: SchemaVersionSource = 'schema',
  sourceTemplateId: string | null = null,
): Promise<GateEntity> {
  return deps.db.transaction(async (m) => {
    // The row lock serialises concurrent schema updates: versions stay gap-free and ordered.
    const gate = await findGate(m, projectId, ref, true);
    gate.schema = change.schema;
    if (change.businessRules !== undefined) gate.businessRules = change.businessRules;
    await checkDefinition(deps, projectId, gate);
    gate.schemaVersion = nextVersionNumber(gate.schemaVersion);
    gate.updatedAt = new Date();
    await insertVersion(m, gate, source, sourceTemplateId);
    await m.getRepository(GateEntity).save(gate);
    return gate;
  });
}

export async function listGateVersions(deps: GateDeps, projectId: string, ref: string): Promise<GateSchemaVersionEntity[]> {
  const gate = await findGate(deps.db, projectId, ref);
  return listVersionRows(deps.db, GATE_VERSIONS, gate.id, 'ASC');
}
