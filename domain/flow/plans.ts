/**
 * Spec, Limits §7 (Flow plans), by the project's `plan` column. `null` means unlimited. Runs per
 * month are a hard cap only where the plan has no overage price (Free): paid plans keep accepting
 * runs past their allowance and the overage is billed, not refused.
 */
export interface FlowPlan {
  runsPerMonth: number;
  /** Whether runs past `runsPerMonth` are refused (no overage price on the plan). */
  hardRunCap: boolean;
  maxGates: number | null;
  maxApproversPerGate: number | null;
  artefactRetentionDays: number;
  /** Characters of a submitted payload: the text in freetext mode, the JSON text in variables mode. */
  contentLimitChars: number;
}

export const FLOW_PLANS: Record<'free' | 'starter' | 'growth' | 'scale', FlowPlan> = {
  free: { runsPerMonth: 500, hardRunCap: true, maxGates: 3, maxApproversPerGate: 5, artefactRetentionDays: 3, contentLimitChars: 50_000 },
  starter: { runsPerMonth: 10_000, hardRunCap: false, maxGates: null, maxApproversPerGate: 10, artefactRetentionDays: 5, contentLimitChars: 100_000 },
  growth: { runsPerMonth: 100_000, hardRunCap: false, maxGates: null, maxApproversPerGate: 25, artefactRetentionDays: 5, contentLimitChars: 200_000 },
  scale: { runsPerMonth: 500_000, hardRunCap: false, maxGates: null, maxApproversPerGate: null, artefactRetentionDays: 5, contentLimitChars: 500_000 },
};

/** An unknown plan name gets the Free limits: the safe reading of a typo in the projects table. */
export function flowPlan(plan: string | null | undefined): FlowPlan {
  return FLOW_PLANS[(plan ?? 'free') as keyof typeof FLOW_PLANS] ?? FLOW_PLANS.free;
}

/** First instant of the UTC calendar month of `now`: run allowances reset then. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
