import { FLOW_PLANS, type FlowPlan } from './plans';

/**
 * The price side of the spec's Limits §7 (Flow plans), §8 (recurring document add-ons) and §9
 * (one-time credit packs). Limits stay in plans.ts, which enforcement reads; this is what the
 * analytics endpoints show and bill by.
 */

export type FlowPlanId = keyof typeof FLOW_PLANS;

export interface FlowPlanPrice {
  id: FlowPlanId;
  name: string;
  monthlyPriceUsd: number;
  /** Spec: "about 20% cheaper"; the spec's own yearly figures, not 12 × monthly × 0.8. */
  annualPriceUsd: number;
  /** Null: the plan has no overage, runs past the allowance are refused (Free). */
  overagePerRunUsd: number | null;
}

export const FLOW_PLAN_PRICES: FlowPlanPrice[] = [
  { id: 'free', name: 'Free', monthlyPriceUsd: 0, annualPriceUsd: 0, overagePerRunUsd: null },
  { id: 'starter', name: 'Starter', monthlyPriceUsd: 29, annualPriceUsd: 278.4, overagePerRunUsd: 0.005 },
  { id: 'growth', name: 'Growth', monthlyPriceUsd: 99, annualPriceUsd: 950.4, overagePerRunUsd: 0.004 },
  { id: 'scale', name: 'Scale', monthlyPriceUsd: 349, annualPriceUsd: 3350.4, overagePerRunUsd: 0.002 },
];

/** A project's plan column as a known plan id; anything else is read as Free, as plans.ts does. */
export function planId(plan: string | null | undefined): FlowPlanId {
  return plan && plan in FLOW_PLANS ? (plan as FlowPlanId) : 'free';
}

export function planPrice(id: FlowPlanId): FlowPlanPrice {
  return FLOW_PLAN_PRICES.find((p) => p.id === id)!;
}

export function planLimits(id: FlowPlanId): FlowPlan {
  return FLOW_PLANS[id];
}

/**
 * Overage cost in USD, rounded to the cent. Computed in ten-thousandths of a dollar (the prices'
 * precision) so 3 × 0.005 is 0.015 exactly before rounding, not 0.015000000000000001.
 */
export function overageCostUsd(overageRuns: number, perRunUsd: number | null): number {
  if (!perRunUsd || overageRuns <= 0) return 0;
  const tenThousandths = overageRuns * Math.round(perRunUsd * 10_000);
  return Math.round(tenThousandths / 100) / 100;
}

export interface CreditPack {
  documents: number;
  priceUsd: number;
}

export interface DocumentAddOn {
  documentsPerMonth: number;
  priceUsdPerMonth: number;
}

/** Spec, Limits §9: one-time, credits never expire. */
export const CREDIT_PACKS: CreditPack[] = [
  { documents: 100, priceUsd: 15 },
  { documents: 500, priceUsd: 50 },
  { documents: 1000, priceUsd: 90 },
  { documents: 2500, priceUsd: 200 },
];

/** Spec, Limits §8: recurring, available on every tier. */
export const DOCUMENT_ADD_ONS: DocumentAddOn[] = [
  { documentsPerMonth: 500, priceUsdPerMonth: 19 },
  { documentsPerMonth: 2000, priceUsdPerMonth: 49 },
  { documentsPerMonth: 10_000, priceUsdPerMonth: 119 },
];
