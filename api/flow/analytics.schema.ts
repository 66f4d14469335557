import Joi from 'joi';
import { GRANULARITIES, PERIODS, type Granularity, type Period } from '../../domain/flow/analytics-periods';

/** Query shapes of the Flow analytics endpoints (spec, "Flow analytics"); unknown fields are refused. */

export interface PeriodQuery {
  period: Period;
}
export interface PeriodGateQuery extends PeriodQuery {
  gateId?: string;
}
export interface PeriodGranularityQuery extends PeriodQuery {
  granularity: Granularity;
}
export interface PeriodGranularityGateQuery extends PeriodGranularityQuery {
  gateId?: string;
}
/** Every query above: the period, and the gate where one may be named. */
export type AnalyticsQuery = PeriodQuery & { gateId?: string };
/** No parameters at all. */
export type NoQuery = Record<string, never>;

const period = Joi.string().valid(...PERIODS).default('30d');
const granularity = Joi.string().valid(...GRANULARITIES).default('day');
const gateId = Joi.string().min(1).max(200);

export const periodGateQuery = Joi.object<PeriodGateQuery, true>({ period, gateId });
export const periodGranularityGateQuery = Joi.object<PeriodGranularityGateQuery, true>({ period, granularity, gateId });
export const periodGranularityQuery = Joi.object<PeriodGranularityQuery, true>({ period, granularity });
export const periodQuery = Joi.object<PeriodQuery, true>({ period });
export const noQuery = Joi.object<NoQuery, true>({});
