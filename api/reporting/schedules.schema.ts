import Joi from 'joi';
import type { ReportFormat } from '../../db/reporting/report.entity';
import type { ScheduleStatus, ScheduleTargetType } from '../../db/reporting/schedule.entity';

/**
 * Schedule bodies (docs/reporting.md "Scheduling"). The shape is checked
 * here (unknown fields: 400 ERR_VALID_001); the cron and zone by domain/reporting/cron.ts (ERR_SCHED_002,
 * ERR_SCHED_003), the target, parameters and channels by the service. A cron longer than the
 * grammar's 200 characters reaches the service and is named there (ERR_SCHED_002 TOO_LONG); this cap
 * only bounds what is read at all.
 */

const FORMATS = ['pdf', 'excel', 'csv'] as const;
const ref = Joi.string().trim().min(1).max(200);

export interface ScheduleFields {
  name: string;
  target: { type: ScheduleTargetType; id: string };
  cron: string;
  timezone?: string;
  parameters?: Record<string, unknown>;
  channelIds?: string[];
  outputs?: ReportFormat[] | null;
  skipIfEmpty?: boolean | null;
  catchupWindowMinutes?: number;
  startAt?: Date | null;
  endAt?: Date | null;
}

export type CreateScheduleInput = ScheduleFields;
export type UpdateScheduleInput = Partial<ScheduleFields>;

const fields = {
  name: Joi.string().trim().min(1).max(100),
  target: Joi.object({ type: Joi.string().valid('report', 'job').required(), id: ref.required() }),
  cron: Joi.string().max(1000),
  timezone: Joi.string().trim().min(1).max(100),
  // Values are checked against the report's parameters (ERR_RPT_007); the count bounds the work.
  parameters: Joi.object().unknown(true).max(50),
  // Past 10 the service answers ERR_CHAN_002 (the channel rule), so the cap here is only a bound.
  channelIds: Joi.array().items(Joi.string().trim().min(1).max(200)).max(100),
  outputs: Joi.array().items(Joi.string().valid(...FORMATS)).min(1).max(3).unique().allow(null),
  skipIfEmpty: Joi.boolean().allow(null),
  catchupWindowMinutes: Joi.number().integer().min(0).max(1440),
  startAt: Joi.date().iso().allow(null),
  endAt: Joi.date().iso().allow(null),
};

export const createScheduleSchema = Joi.object<CreateScheduleInput, true>({ ...fields, name: fields.name.required(), target: fields.target.required(), cron: fields.cron.required() });

export const updateScheduleSchema = Joi.object<UpdateScheduleInput, true>(fields).min(1);

export interface ListSchedulesQuery {
  page: number;
  limit: number;
  targetType?: ScheduleTargetType;
  targetId?: string;
  status?: ScheduleStatus;
}

export const listSchedulesSchema = Joi.object<ListSchedulesQuery, true>({
  page: Joi.number().integer().min(1).max(1_000_000).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  targetType: Joi.string().valid('report', 'job'),
  targetId: ref,
  status: Joi.string().valid('active', 'paused'),
});

export interface PauseScheduleInput {
  note?: string;
}

export const pauseScheduleSchema = Joi.object<PauseScheduleInput, true>({ note: Joi.string().trim().max(500).allow('') });

export const resumeScheduleSchema = Joi.object<Record<never, never>, true>({});

export interface ValidateCronInput {
  cron: string;
  timezone: string;
  count: number;
}

export const validateCronSchema = Joi.object<ValidateCronInput, true>({
  cron: fields.cron.required(),
  timezone: fields.timezone.default('UTC'),
  // How many next fire times the answer lists (`nextRunTimes`).
  count: Joi.number().integer().min(1).max(20).default(5),
});
