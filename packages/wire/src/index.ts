/**
 * What the Formwork server and its reporting agent (agent/, docs/agent.md) share: the error
 * catalogue, the query runner port, the discovered schema's limits, the sealed box the server
 * seals datasource secrets in for an agent, and which runner errors are connection failures.
 */
export * from './errors';
export * from './query-runner';
export * from './discovered-schema';
export * from './connection-errors';
export * from './cleartext-password';
export * from './sealed-box';
