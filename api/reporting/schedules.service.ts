import { randomUUID } from 'node:crypto';
import type { Client, ScheduleDescription } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { resolveChannelRefs } from '../../db/reporting/channel-refs';
import { ReportJobEntity } from '../../db/reporting/job.entity';
import { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import { ReportScheduleEntity } from '../../db/reporting/schedule.entity';
import type { Queryable } from '../../db/sql';
import { AppError } from '../../domain/errors';
import type { Logger } from '../../domain/logger';
import { checkSchedule, type CronWarning, type ScheduleCheck } from '../../domain/reporting/cron';
import { coerceParameters } from '../../domain/reporting/parameters';
import { randomBase62 } from '../../domain/signing';
import type { TaskQueues } from '../../domain/temporal-names';
import {
  deleteReportSchedule,
  describeReportSchedule,
  setReportSchedulePaused,
  triggerReportSchedule,
  updateReportSchedule,
  upsertReportSchedule,
} from '../../platform/report-schedules';
import { getReport } from './reports.service';
import type { CreateScheduleInput, ListSchedulesQuery, UpdateScheduleInput } from './schedules.schema';
import { isUuid } from '../../domain/ids';
import { findByIdOrShortId } from '../../db/find-by-ref';

/**
 * Report schedules (docs/reporting.md "Scheduling", "Temporal workflows"). Rows first, then the
 * Temporal Schedule: a Temporal failure after the row is written is logged and left to the
 * maintenance reconciler (the answer still describes the row; `nextRunTimes` is empty until then).
 */

export interface ScheduleDeps {
  db: DataSource;
  temporal: Client;
  taskQueues: TaskQueues;
  logger: Logger;
  limits: { minIntervalMinutes: number; schedulesPerProject: number };
}

export interface ScheduleActor {
  projectId: string;
  userId?: string;
}

const SHORT_ID_PREFIX = 'rsch_';
const JOB_SHORT_ID_PREFIX = 'rjob_';
/** Stored parameters as JSON text. */
const MAX_PARAMETERS_BYTES = 64 * 1024;
/** How long POST …/trigger waits for the run record before answering without it. */
const TRIGGER_WAIT_MS = 5000;

async function findSchedule(db: Queryable, projectId: string, ref: string): Promise<ReportScheduleEntity> {
  const found = await findByIdOrShortId(db, ReportScheduleEntity, projectId, ref, SHORT_ID_PREFIX, 40);
  if (!found || found.deletedAt) throw new AppError('ERR_SCHED_001', undefined, { scheduleId: String(ref).slice(0, 200) });
  return found;
}

/** The cron and zone checked (400 ERR_SCHED_002 with every problem, ERR_SCHED_003 for the interval). */
export function checkCron(deps: Pick<ScheduleDeps, 'limits'>, cron: string, timezone: string): ScheduleCheck {
  return checkSchedule(cron, timezone, { minIntervalMinutes: deps.limits.minIntervalMinutes, now: new Date() });
}

function requireValidCron(deps: Pick<ScheduleDeps, 'limits'>, cron: string, timezone: string): ScheduleCheck {
  const check = checkCron(deps, cron, timezone);
  if (check.tooFrequent) throw new AppError('ERR_SCHED_003', check.errors[0].message, { ...check.tooFrequent });
  if (!check.valid) throw new AppError('ERR_SCHED_002', undefined, { errors: check.errors });
  return check;
}

/** The creator's profile zone, else UTC. */
async function defaultZone(db: DataSource, userId: string | undefined): Promise<string> {
  if (!userId) return 'UTC';
  const [row] = await db.query(`SELECT timezone FROM users WHERE id = $1`, [userId]);
  return row?.timezone || 'UTC';
}

/**
 * The target checked (a published report: 409 ERR_SCHED_005; a live job) with the schedule's
 * parameters and outputs against the report's latest version. Answers the target's id.
 */
async function checkTarget(db: DataSource, projectId: string, s: Pick<ReportScheduleEntity, 'targetType' | 'parameters' | 'outputs' | 'timezone'>, ref: string): Promise<string> {
  if (s.targetType === 'job') {
    const where = isUuid(ref) ? { id: ref.toLowerCase(), projectId } : ref.startsWith(JOB_SHORT_ID_PREFIX) ? { shortId: ref, projectId } : null;
    const job = where ? await db.getRepository(ReportJobEntity).findOneBy(where) : null;
    if (!job || job.deletedAt) throw new AppError('ERR_RJOB_001', undefined, { jobId: ref });
    if (Object.keys(s.parameters).length > 0) throw new AppError('ERR_VALID_001', 'Job schedules take no parameters (each job item has its own)', { field: 'parameters' });
    return job.id;
  }
  const report = await getReport({ db }, projectId, ref);
  if (report.latestVersion === 0) throw new AppError('ERR_SCHED_005', 'The report has no published version', { reportId: report.id });
  const version = await db.getRepository(ReportVersionEntity).findOneBy({ reportId: report.id, version: report.latestVersion });
  if (!version) throw new AppError('ERR_SCHED_005', 'The report has no published version', { reportId: report.id });
  const available = [...new Set(version.definition.outputs.map((o) => o.format))];
  const missing = (s.outputs ?? []).filter((f) => !available.includes(f));
  if (missing.length > 0) throw new AppError('ERR_VALID_001', `The report has no ${missing.join(', ')} output (it has ${available.join(', ')})`, { field: 'outputs' });
  // Checked now with today's clock; each run checks them again with its own (a later version may differ).
  coerceParameters(version.definition.parameters, s.parameters, { now: new Date(), timezone: s.timezone });
  return report.id;
}

function checkParametersSize(parameters: Record<string, unknown>): void {
  if (Buffer.byteLength(JSON.stringify(parameters)) > MAX_PARAMETERS_BYTES) {
    throw new AppError('ERR_VALID_001', `Schedule parameters are larger than ${MAX_PARAMETERS_BYTES} bytes`, { field: 'parameters' });
  }
}

function checkWindow(startAt: Date | null, endAt: Date | null): void {
  if (startAt && endAt && endAt <= startAt) throw new AppError('ERR_VALID_001', 'endAt must be after startAt', { field: 'endAt' });
}

/** Logs a Temporal failure after the row was written: the reconciler makes it right. */
async function temporalStep(deps: ScheduleDeps, what: string, row: ReportScheduleEntity, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    deps.logger.error('report schedule: Temporal step failed; the maintenance reconciler repairs it', { step: what, scheduleId: row.id, error: err instanceof Error ? err.message : String(err) });
  }
}

export interface ScheduleView {
  schedule: ReportScheduleEntity;
  description?: ScheduleDescription | null;
  warnings?: CronWarning[];
  cronDescription?: string;
  lastRun?: LastRun | null;
}

export interface LastRun {
  runId?: string;
  jobRunId?: string;
  status: string;
  scheduledFor: Date;
}

async function lastRuns(db: Queryable, schedules: ReportScheduleEntity[]): Promise<Map<string, LastRun>> {
  const out = new Map<string, LastRun>();
  if (schedules.length === 0) return out;
  const ids = schedules.map((s) => s.id);
  const runs: Array<{ schedule_id: string; id: string; status: string; scheduled_for: Date }> = await db.query(
    `SELECT DISTINCT ON (schedule_id) schedule_id, id, status, scheduled_for FROM reporting_runs
      WHERE schedule_id = ANY($1::uuid[]) AND job_run_id IS NULL ORDER BY schedule_id, created_at DESC`,
    [ids],
  );
  for (const r of runs) out.set(r.schedule_id, { runId: r.id, status: r.status, scheduledFor: r.scheduled_for });
  const jobRuns: Array<{ schedule_id: string; id: string; status: string; scheduled_for: Date }> = await db.query(
    `SELECT DISTINCT ON (schedule_id) schedule_id, id, status, scheduled_for FROM reporting_job_runs
      WHERE schedule_id = ANY($1::uuid[]) ORDER BY schedule_id, created_at DESC`,
    [ids],
  );
  for (const r of jobRuns) out.set(r.schedule_id, { jobRunId: r.id, status: r.status, scheduledFor: r.scheduled_for });
  return out;
}

/** A schedule with what Temporal says of it (next times, counts), its warnings and its last run. */
async function viewOf(deps: ScheduleDeps, schedule: ReportScheduleEntity): Promise<ScheduleView> {
  const [description, last] = await Promise.all([
    describeReportSchedule(deps, schedule.id).catch((err) => {
      deps.logger.warn('report schedule: describe failed', { scheduleId: schedule.id, error: err instanceof Error ? err.message : String(err) });
      return null;
    }),
    lastRuns(deps.db, [schedule]),
  ]);
  const check = checkCron(deps, schedule.cron, schedule.timezone);
  return { schedule, description, warnings: check.warnings, cronDescription: check.description, lastRun: last.get(schedule.id) ?? null };
}

export async function createSchedule(deps: ScheduleDeps, actor: ScheduleActor, input: CreateScheduleInput): Promise<ScheduleView> {
  const { db } = deps;
  const timezone = input.timezone ?? (await defaultZone(db, actor.userId));
  const check = requireValidCron(deps, input.cron, timezone);
  const parameters = input.parameters ?? {};
  checkParametersSize(parameters);
  checkWindow(input.startAt ?? null, input.endAt ?? null);
  const now = new Date();
  const row: ReportScheduleEntity = {
    id: randomUUID(),
    projectId: actor.projectId,
    shortId: SHORT_ID_PREFIX + randomBase62(16),
    name: input.name,
    targetType: input.target.type,
    targetId: '',
    cron: input.cron.trim(),
    timezone: check.timezone,
    parameters,
    channelIds: [],
    outputs: input.outputs ?? null,
    skipIfEmpty: input.skipIfEmpty ?? null,
    status: 'active',
    pauseNote: null,
    catchupWindowMinutes: input.catchupWindowMinutes ?? 60,
    startAt: input.startAt ?? null,
    endAt: input.endAt ?? null,
    createdBy: actor.userId ?? null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  row.targetId = await checkTarget(db, actor.projectId, row, input.target.id);
  row.channelIds = await resolveChannelRefs(db, actor.projectId, input.channelIds);
  await db.transaction(async (m) => {
    // One writer per project at a time, so two creates cannot both pass the limit.
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('reporting_schedules:' || $1))`, [actor.projectId]);
    const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM reporting_schedules WHERE project_id = $1 AND deleted_at IS NULL`, [actor.projectId]);
    if (n >= deps.limits.schedulesPerProject) throw new AppError('ERR_SCHED_004', `At most ${deps.limits.schedulesPerProject} schedules per project`, { limit: deps.limits.schedulesPerProject });
    await m.getRepository(ReportScheduleEntity).insert(row as QueryDeepPartialEntity<ReportScheduleEntity>);
  });
  await temporalStep(deps, 'create', row, () => upsertReportSchedule(deps, row));
  return viewOf(deps, row);
}

export async function listSchedules(deps: ScheduleDeps, projectId: string, q: ListSchedulesQuery): Promise<{ views: ScheduleView[]; total: number }> {
  const qb = deps.db.getRepository(ReportScheduleEntity).createQueryBuilder('s').where('s.projectId = :projectId AND s.deletedAt IS NULL', { projectId });
  if (q.targetType) qb.andWhere('s.targetType = :targetType', { targetType: q.targetType });
  if (q.targetId) {
    if (!isUuid(q.targetId)) return { views: [], total: 0 };
    qb.andWhere('s.targetId = :targetId', { targetId: q.targetId.toLowerCase() });
  }
  if (q.status) qb.andWhere('s.status = :status', { status: q.status });
  qb.orderBy('s.createdAt', 'DESC').addOrderBy('s.id', 'DESC');
  const [rows, total] = await qb.skip((q.page - 1) * q.limit).take(q.limit).getManyAndCount();
  const last = await lastRuns(deps.db, rows);
  // Lists read no Temporal Schedule (one call each): GET /schedules/:id has nextRunTimes and the counts.
  return { views: rows.map((schedule) => ({ schedule, lastRun: last.get(schedule.id) ?? null })), total };
}

export async function getSchedule(deps: ScheduleDeps, projectId: string, ref: string): Promise<ScheduleView> {
  return viewOf(deps, await findSchedule(deps.db, projectId, ref));
}

/** The fields given, checked as on create against the result; the Temporal Schedule is updated in place. */
export async function updateSchedule(deps: ScheduleDeps, actor: ScheduleActor, ref: string, patch: UpdateScheduleInput): Promise<ScheduleView> {
  const { db } = deps;
  const old = await findSchedule(db, actor.projectId, ref);
  const next: ReportScheduleEntity = {
    ...old,
    name: patch.name ?? old.name,
    targetType: patch.target?.type ?? old.targetType,
    cron: patch.cron !== undefined ? patch.cron.trim() : old.cron,
    timezone: patch.timezone ?? old.timezone,
    parameters: patch.parameters ?? old.parameters,
    outputs: patch.outputs !== undefined ? patch.outputs : old.outputs,
    skipIfEmpty: patch.skipIfEmpty !== undefined ? patch.skipIfEmpty : old.skipIfEmpty,
    catchupWindowMinutes: patch.catchupWindowMinutes ?? old.catchupWindowMinutes,
    startAt: patch.startAt !== undefined ? patch.startAt : old.startAt,
    endAt: patch.endAt !== undefined ? patch.endAt : old.endAt,
    updatedAt: new Date(),
  };
  next.timezone = requireValidCron(deps, next.cron, next.timezone).timezone;
  checkParametersSize(next.parameters);
  checkWindow(next.startAt, next.endAt);
  next.targetId = await checkTarget(db, actor.projectId, next, patch.target?.id ?? old.targetId);
  if (patch.channelIds !== undefined) next.channelIds = await resolveChannelRefs(db, actor.projectId, patch.channelIds);
  const { id, projectId, shortId, createdAt, createdBy, deletedAt, ...changes } = next;
  void [projectId, shortId, createdAt, createdBy, deletedAt];
  await db.getRepository(ReportScheduleEntity).update({ id, projectId: actor.projectId }, changes as QueryDeepPartialEntity<ReportScheduleEntity>);
  await temporalStep(deps, 'update', next, () => updateReportSchedule(deps, next));
  return viewOf(deps, next);
}

/** Soft-deletes the row, then the Temporal Schedule; runs already started go on. */
export async function deleteSchedule(deps: ScheduleDeps, projectId: string, ref: string): Promise<void> {
  const row = await findSchedule(deps.db, projectId, ref);
  await deps.db.getRepository(ReportScheduleEntity).update({ id: row.id, projectId }, { deletedAt: new Date(), updatedAt: new Date() });
  await temporalStep(deps, 'delete', row, () => deleteReportSchedule(deps, row.id));
}

/** `active ⇄ paused` on the row (with the note), then Temporal's own pause state. */
export async function setPaused(deps: ScheduleDeps, projectId: string, ref: string, paused: boolean, note?: string): Promise<ScheduleView> {
  const row = await findSchedule(deps.db, projectId, ref);
  const next: ReportScheduleEntity = { ...row, status: paused ? 'paused' : 'active', pauseNote: paused ? note || null : null, updatedAt: new Date() };
  await deps.db.getRepository(ReportScheduleEntity).update({ id: row.id, projectId }, { status: next.status, pauseNote: next.pauseNote, updatedAt: next.updatedAt });
  await temporalStep(deps, paused ? 'pause' : 'resume', next, () => setReportSchedulePaused(deps, next));
  return viewOf(deps, next);
}

export interface TriggerAnswer {
  triggered: true;
  /** `overlap`: a run of this schedule is still going, so Temporal skipped this one (overlap SKIP). */
  skipped: 'overlap' | null;
  runId: string | null;
  jobRunId: string | null;
  shortId: string | null;
  status: string | null;
  scheduledFor: string | null;
  statusUrl: string | null;
}

/**
 * One occurrence now (POST …/trigger), under the overlap policy: while a run of the schedule is
 * going, Temporal skips it and the answer says `skipped: overlap` at once. Otherwise the answer
 * waits up to 5 s for the run record and names it; a slower start answers with nulls (the run
 * appears in the schedule's runs).
 */
export async function triggerSchedule(deps: ScheduleDeps, projectId: string, ref: string): Promise<TriggerAnswer> {
  const row = await findSchedule(deps.db, projectId, ref);
  const none: TriggerAnswer = { triggered: true, skipped: null, runId: null, jobRunId: null, shortId: null, status: null, scheduledFor: null, statusUrl: null };
  const before = await describeReportSchedule(deps, row.id);
  const [{ since }] = await deps.db.query(`SELECT now() AS since`);
  await triggerReportSchedule(deps, row);
  if (before && before.info.runningActions.length > 0) return { ...none, skipped: 'overlap' };
  const table = row.targetType === 'job' ? 'reporting_job_runs' : 'reporting_runs';
  const deadline = Date.now() + TRIGGER_WAIT_MS;
  while (Date.now() < deadline) {
    const [found] = await deps.db.query(`SELECT id, short_id, status, scheduled_for FROM ${table} WHERE schedule_id = $1 AND created_at >= $2 ORDER BY created_at LIMIT 1`, [row.id, since]);
    if (found) {
      const isJob = row.targetType === 'job';
      return {
        ...none,
        runId: isJob ? null : found.id,
        jobRunId: isJob ? found.id : null,
        shortId: found.short_id,
        status: found.status,
        scheduledFor: new Date(found.scheduled_for).toISOString(),
        statusUrl: isJob ? `/api/reporting/job-runs/${found.id}` : `/api/reporting/runs/${found.id}`,
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return none;
}
