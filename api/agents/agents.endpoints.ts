import { noContent, ok, pageOf } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { operationsOf, routeTable } from '../openapi/route';
import * as schema from './agents.schema';

/**
 * The declarations (docs/architecture.md "One declaration per route") of reporting agents'
 * management (mounted by api/agents/agents.routes.ts) and of the protocol the agent process speaks
 * with its own token (api/agents/agent-protocol.routes.ts, docs/agent.md). Apart from the handlers,
 * so that the OpenAPI document is built without loading the services.
 */
const id = { id: 'The agent id' };
const taskId = { taskId: 'The task id' };

const agent = routeTable('Reporting agents');

export const agentEndpoints = {
  create: agent('post', '/api/agents', 'Register an agent', { description: 'The agent token (`fmag_…`) is shown once. Needs a verified e-mail address (403 `ERR_AUTH_006`).', security: 'team', request: { body: schema.createAgentSchema }, responses: { 201: ok('The agent with its token', resource('AgentWithToken')) } }),
  list: agent('get', '/api/agents', 'List agents', { security: 'team', request: { query: schema.listAgentsSchema }, responses: { 200: ok('A page of agents', pageOf(resource('Agent'))) } }),
  get: agent('get', '/api/agents/:id', 'Get an agent', { security: 'team', request: { params: id }, responses: { 200: ok('The agent', resource('Agent')) } }),
  update: agent('patch', '/api/agents/:id', 'Update an agent', { security: 'team', request: { params: id, body: schema.updateAgentSchema }, responses: { 200: ok('The agent', resource('Agent')) } }),
  delete: agent('delete', '/api/agents/:id', 'Delete an agent', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  rotateToken: agent('post', '/api/agents/:id/rotate-token', 'Replace an agent\'s token', { security: 'team', request: { params: id }, responses: { 200: ok('The new token, shown in this answer only, and its prefix', { type: 'object', required: ['token', 'tokenPrefix'], properties: { token: { type: 'string' }, tokenPrefix: { type: 'string' } }, additionalProperties: false }) } }),
  confirmKey: agent('post', '/api/agents/:id/key/confirm', 'Confirm the public key an agent sent, by its fingerprint', { security: 'team', request: { params: id, body: schema.confirmKeySchema }, responses: { 200: ok('The agent, its key confirmed', resource('Agent')) } }),
  clearKey: agent('delete', '/api/agents/:id/key', 'Forget an agent\'s public key (its next session sends one to confirm)', { security: 'team', request: { params: id }, responses: { 200: ok('The agent, without a key', resource('Agent')) } }),
  health: agent('get', '/api/agents/:id/health', 'An agent\'s sessions and pool health', { security: 'team', request: { params: id }, responses: { 200: ok('The health', resource('AgentHealth')) } }),
  tasks: agent('get', '/api/agents/:id/tasks', 'Tasks of an agent', { security: 'team', request: { params: id, query: schema.listTasksSchema }, responses: { 200: ok('A page of tasks', pageOf(resource('AgentTask'))) } }),
};

const protocol = routeTable('Agent protocol');

export const agentProtocolEndpoints = {
  openSession: protocol('post', '/api/agents/me/sessions', 'Open a session (the agent starts)', { security: 'agent', request: { body: schema.openSessionSchema }, responses: { 201: ok('The session', resource('AgentSessionOpened')) } }),
  nextTask: protocol('get', '/api/agents/me/tasks/next', 'Long-poll for the next task', { security: 'agent', request: { query: schema.nextTaskSchema }, responses: { 200: ok('A task', resource('LeasedAgentTask')), 204: { description: 'No task within the wait', contentType: 'none' } } }),
  heartbeat: protocol('post', '/api/agents/me/heartbeat', 'Report liveness, pool stats and running tasks', { security: 'agent', request: { body: schema.heartbeatSchema }, responses: { 200: ok('Tasks to cancel, if any', resource('AgentHeartbeatAnswer')) } }),
  /** Its body, JSON or NDJSON by the task's kind, is read and validated by its handler (agent-protocol.routes.ts): mount it with its query schema only. */
  result: protocol('post', '/api/agents/me/tasks/:taskId/result', 'Upload a task\'s result', {
    description: 'Test and schema tasks send JSON; query and preview tasks send NDJSON rows (`application/x-ndjson`, optionally `Content-Encoding: gzip`).',
    security: 'agent',
    request: { params: taskId, query: schema.taskUploadQuerySchema, body: schema.taskJsonResultSchema, otherContent: { 'application/x-ndjson': { type: 'string', description: 'One JSON row per line' } } },
    responses: { 200: ok('Accepted', { type: 'object', properties: { accepted: { type: 'boolean' } } }) },
  }),
  failure: protocol('post', '/api/agents/me/tasks/:taskId/failure', 'Report that a task failed', { security: 'agent', request: { params: taskId, body: schema.taskFailureSchema }, responses: { 200: ok('Accepted', { type: 'object', properties: { accepted: { type: 'boolean' } } }) } }),
};

/** The OpenAPI operations of these routes (api/openapi/operations.ts). */
export const agentsOperations = [...operationsOf(agentEndpoints), ...operationsOf(agentProtocolEndpoints)];
