import Joi from 'joi';
import type { AgentTaskKind, AgentTaskStatus } from '../../db/reporting/agent-task.entity';
import { AGENT_DATASOURCE_KINDS } from '../../domain/reporting/query-runner';

/**
 * Agent bodies (docs/reporting.md "Agents", "The agent protocol"): the management API and the agent
 * protocol. Unknown fields are refused (400 ERR_VALID_001); every list and string is bounded.
 */

const name = Joi.string().trim().min(1).max(100);
const description = Joi.string().trim().max(1000).allow('', null);
const TASK_KINDS: AgentTaskKind[] = ['query', 'test', 'schema', 'preview'];
const TASK_STATUSES: AgentTaskStatus[] = ['queued', 'leased', 'completed', 'failed', 'cancel_requested', 'cancelled', 'expired'];
const AGENT_STATUSES = ['never_connected', 'online', 'degraded', 'offline'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
const page = Joi.number().integer().min(1).max(1_000_000).default(1);
const limit = Joi.number().integer().min(1).max(100).default(20);

export interface CreateAgentInput {
  name: string;
  description?: string | null;
}

export interface UpdateAgentInput {
  name?: string;
  description?: string | null;
  isActive?: boolean;
}

export const createAgentSchema = Joi.object<CreateAgentInput, true>({ name: name.required(), description });
export const updateAgentSchema = Joi.object<UpdateAgentInput, true>({ name, description, isActive: Joi.boolean().strict() }).min(1);

export interface ConfirmKeyInput {
  fingerprint: string;
}
export const confirmKeySchema = Joi.object<ConfirmKeyInput, true>({ fingerprint: Joi.string().max(100).required() });

export interface ListAgentsQuery {
  page: number;
  limit: number;
  status?: AgentStatus;
}

export const listAgentsSchema = Joi.object<ListAgentsQuery, true>({ page, limit, status: Joi.string().valid(...AGENT_STATUSES) });

export interface ListTasksQuery {
  page: number;
  limit: number;
  status?: AgentTaskStatus;
  kind?: AgentTaskKind;
}

export const listTasksSchema = Joi.object<ListTasksQuery, true>({
  page,
  limit,
  status: Joi.string().valid(...TASK_STATUSES),
  kind: Joi.string().valid(...TASK_KINDS),
});

// --- the agent protocol (/api/agents/me/*) ---

export interface OpenSessionInput {
  version: string;
  hostname: string;
  platform: string;
  /** The datasource kinds the agent can reach (legacy agents sent task kinds, read as every kind). */
  capabilities: string[];
  maxConcurrency: number;
  publicKey?: string;
}

export const openSessionSchema = Joi.object<OpenSessionInput, true>({
  version: Joi.string().trim().min(1).max(50).required(),
  hostname: Joi.string().trim().min(1).max(255).required(),
  platform: Joi.string().trim().min(1).max(50).required(),
  // The datasource kinds the agent can reach (docs/reporting.md "The agent protocol"); the task kinds
  // earlier agents sent here are still accepted and read as "every kind an agent reads".
  capabilities: Joi.array()
    .items(Joi.string().valid(...AGENT_DATASOURCE_KINDS, ...TASK_KINDS))
    .min(1)
    .max(AGENT_DATASOURCE_KINDS.length + TASK_KINDS.length)
    .unique()
    .required(),
  maxConcurrency: Joi.number().integer().min(1).max(32).required(),
  publicKey: Joi.string().max(10_000),
});

export interface NextTaskQuery {
  sessionId: string;
  wait: number;
}

export const nextTaskSchema = Joi.object<NextTaskQuery, true>({
  sessionId: Joi.string().guid().required(),
  wait: Joi.number().min(0).max(50).default(50),
});

const taskRef = Joi.string().max(40);

export interface HeartbeatInput {
  sessionId: string;
  running: string[];
  load?: { running: number; capacity: number };
  pools: Array<{ datasourceId: string; size: number; max: number; idle: number; waiting: number; lastError?: string | null }>;
}

const count = Joi.number().integer().min(0).max(1_000_000);

export const heartbeatSchema = Joi.object<HeartbeatInput, true>({
  sessionId: Joi.string().guid().required(),
  running: Joi.array().items(taskRef).max(64).default([]),
  load: Joi.object({ running: count.required(), capacity: count.required() }),
  pools: Joi.array()
    .items(
      Joi.object({
        datasourceId: Joi.string().max(40).required(),
        size: count.required(),
        max: count.required(),
        idle: count.required(),
        waiting: count.required(),
        lastError: Joi.string().max(500).allow(null, ''),
      }),
    )
    .max(100)
    .default([]),
});

export interface TaskUploadQuery {
  sessionId?: string;
}

export const taskUploadQuerySchema = Joi.object<TaskUploadQuery, true>({ sessionId: Joi.string().guid() });

export interface TaskFailureInput {
  code: string;
  message: string;
  retryable: boolean;
  dbCode?: string;
}

export const taskFailureSchema = Joi.object<TaskFailureInput, true>({
  code: Joi.string()
    .pattern(/^[A-Za-z0-9_.-]{1,64}$/)
    .required(),
  message: Joi.string().max(2000).allow('').required(),
  retryable: Joi.boolean().strict().required(),
  dbCode: Joi.string().max(32),
});

/** A test's or schema discovery's answer: a JSON object (the body limit bounds its size). */
export const taskJsonResultSchema = Joi.object().unknown(true).max(1000);
