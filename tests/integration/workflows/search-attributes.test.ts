import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { createLogger } from '../../../domain/logger';
import { ensureSearchAttributes } from '../../../platform/temporal';
import { SEARCH_ATTRIBUTE_KEYS } from '../../../workflows/shared/search-attributes';
import { waitFor } from '../../support/wait';

/**
 * Start-up against a namespace without Formwork's search attributes (docs/operations.md): the API
 * (check only) stops with the names to create instead of failing every workflow start; the worker
 * registers them where it may.
 */
describe('search attributes at start-up', () => {
  let connection: Connection;
  const namespace = `sa-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  });

  afterAll(async () => {
    await connection?.close();
  });

  it('the API refuses to start without them; the worker registers them', async () => {
    const client = new Client({ connection, namespace });
    const logger = createLogger('silent');
    // A new namespace needs a moment before the operator service knows it.
    await waitFor(async () => ((await connection.operatorService.listSearchAttributes({ namespace }).catch(() => null)) ? true : undefined), { timeoutMs: 30_000, what: 'the namespace' });
    await expect(ensureSearchAttributes(client, logger, false)).rejects.toThrow(new RegExp(`namespace '${namespace}' lacks the search attributes FormworkProjectId, FormworkKind, FormworkEntityId`));
    await ensureSearchAttributes(client, logger, true);
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    expect(SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).filter((n) => !(n in (listed.customAttributes ?? {})))).toEqual([]);
    await expect(ensureSearchAttributes(client, logger, false)).resolves.toBeUndefined();
  });
});
