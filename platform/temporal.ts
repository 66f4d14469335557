import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/shared/search-attributes';
import type { Logger } from '../domain/logger';

export async function connectTemporalClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

/**
 * A real cluster does not know Formwork's search attributes until someone registers them; the
 * worker does it at start-up (the dev server launcher registers them itself). Already-registered
 * attributes are fine; a cluster that refuses (no operator rights) gets a warning, not a crash.
 */
export async function ensureSearchAttributes(client: Client, logger: Logger): Promise<void> {
  const { namespace } = client.options;
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !(k.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
    });
  } catch (err) {
    logger.warn('could not register search attributes; register them with `temporal operator search-attribute create`', {
      missing: missing.map((k) => k.name),
      err,
    });
  }
}

/**
 * Routes the Temporal SDK's own logging through the level the operator chose. Must run before the
 * first worker or native connection of the process; later calls are ignored.
 */
export function installTemporalLogging(level: string): void {
  // The SDK's INFO level narrates every worker state change and bundle step: keep it for debug.
  const sdkLevel = ({ debug: 'DEBUG', info: 'WARN', warn: 'WARN', error: 'ERROR', silent: 'ERROR' } as const)[level] ?? 'WARN';
  // The render worker serves activities only, by design; the SDK warns about that at every start.
  const print = new DefaultLogger(sdkLevel);
  const logger = new DefaultLogger(sdkLevel, (entry) => {
    if (!entry.message.startsWith('No workflows registered')) print.log(entry.level, entry.message, entry.meta);
  });
  try {
    Runtime.install({ logger });
  } catch {
    // already installed in this process (tests start several apps in one process)
  }
}
