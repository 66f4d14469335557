import Joi from 'joi';
import { GRANULARITIES, PERIODS, type Granularity, type Period } from '../../domain/flow/analytics-periods';

/** Query shapes of the Flow analytics endpoints (spec, "Flow analytics"); unknown fields are refused. */

export interface AnalyticsQuery {
  period: Period;
  granularity: Granularity;
  gateId?: string;
}

const period = Joi.string().valid(...PERIODS).default('30d');
const granularity = Joi.string().valid(...GRANULARITIES).default('day');
const gateId = Joi.string().min(1).max(200);

export const periodGateQuery = Joi.object<AnalyticsQuery>({ period, gateId });
export const periodGranularityGateQuery = Joi.object<AnalyticsQuery>({ period, granularity, gateId });
export const periodGranularityQuery = Joi.object<AnalyticsQuery>({ period, granularity });
export const periodQuery = Joi.object<AnalyticsQuery>({ period });
export const noQuery = Joi.object({});
