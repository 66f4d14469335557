import { DefaultLogger, Runtime } from '@temporalio/worker';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/shared/search-attributes';
import type { Logger } from '../domain/logger';
import type { Config } from '../domain/config';
import { readFileSync } from 'node:fs';

/**
 * How every process connects to Temporal (docs/operations.md "Temporal Cloud"): the address, TLS from
 * files (a custom CA, a server name, a client certificate and key for mTLS) and an API key. Files are read
 * once, at start-up: a missing one stops the process with its path.
 */
export function temporalConnectionOptions(t: Pick<Config['temporal'], 'address' | 'tls' | 'apiKey'>) {
  const read = (path: string | undefined, variable: string) => {
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`${variable}: cannot read ${path} (${(err as Error).message})`);
    }
  };
  const tls = t.tls
    ? {
        ...(t.tls.serverName ? { serverNameOverride: t.tls.serverName } : {}),
        ...(t.tls.caPath ? { serverRootCACertificate: read(t.tls.caPath, 'TEMPORAL_TLS_CA_PATH') } : {}),
        ...(t.tls.certPath && t.tls.keyPath ? { clientCertPair: { crt: read(t.tls.certPath, 'TEMPORAL_TLS_CERT_PATH')!, key: read(t.tls.keyPath, 'TEMPORAL_TLS_KEY_PATH')! } } : {}),
      }
    : undefined;
  return { address: t.address!, ...(tls ? { tls } : {}), ...(t.apiKey ? { apiKey: t.apiKey } : {}) };
}

/** A Temporal client and the way to close its connection. */
export interface TemporalClient {
  client: Client;
  /** Stops retrying, lets every retry already scheduled run, then closes the connection. */
  close(): Promise<void>;
}

/**
 * The client's gRPC retries (the SDK's default policy: up to 10 attempts, at most 5 s apart) with a
 * close that cannot strand one. The SDK schedules a retry with a timer that opens a new call on the
 * channel; a timer firing after the connection closed throws "Channel has been shut down" outside any
 * promise, which ends the process. So closing first stops new retries, then waits until the last
 * scheduled retry timer has fired (at most the policy's 5 s), then closes.
 */
export async function connectTemporalClient(t: Config['temporal']): Promise<TemporalClient> {
  const policy = defaultGrpcRetryOptions();
  let closing = false;
  let lastRetryAt = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !closing && policy.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const delay = policy.delayFunction(attempt, status);
      lastRetryAt = Math.max(lastRetryAt, Date.now() + delay);
      return delay;
    },
  });
  const connection = await Connection.connect({ ...temporalConnectionOptions(t), interceptors: [interceptor] });
  return {
    client: new Client({ connection, namespace: t.namespace }),
    async close() {
      closing = true;
      // Timers fire in the order they fall due: one due after the last retry's fires after it.
      const wait = lastRetryAt - Date.now();
      if (wait >= 0) await new Promise((resolve) => setTimeout(resolve, wait + 1));
      await connection.close();
    },
  };
}

/**
 * A real cluster does not know Formwork's search attributes until someone registers them; the
 * worker registers them at start-up (the dev server launcher registers them itself). A namespace where
 * they are still missing afterwards (no operator rights, as on Temporal Cloud, where they are created in
 * the Cloud UI or with tcld) stops the process at start-up with the names to create, instead of failing
 * every workflow start later. The API only checks (`register: false`).
 */
export async function ensureSearchAttributes(client: Client, logger: Logger, register = true): Promise<void> {
  const { namespace } = client.options;
  const missingNow = async () => {
    const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
    return SEARCH_ATTRIBUTE_KEYS.filter((k) => !(k.name in (existing.customAttributes ?? {})));
  };
  let missing = await missingNow();
  if (missing.length === 0) return;
  if (register) {
    try {
      await client.connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
      });
    } catch (err) {
      logger.warn('could not register search attributes', { missing: missing.map((k) => k.name), err });
    }
    missing = await missingNow();
    if (missing.length === 0) return;
  }
  throw new Error(
    `Temporal namespace '${namespace}' lacks the search attributes ${missing.map((k) => k.name).join(', ')} (Keyword): create them ` +
      `(\`temporal operator search-attribute create --name <name> --type Keyword\`, or in Temporal Cloud's namespace settings), then start again`,
  );
}

/** Worker Deployment versioning options for a Worker (docs/architecture.md "Changing workflow code"), or none. */
export function workerDeploymentOptions(t: Pick<Config['temporal'], 'deployment'>) {
  if (!t.deployment) return {};
  return {
    workerDeploymentOptions: {
      version: { deploymentName: t.deployment.deploymentName, buildId: t.deployment.buildId },
      useWorkerVersioning: true as const,
      defaultVersioningBehavior: t.deployment.behavior === 'pinned' ? ('PINNED' as const) : ('AUTO_UPGRADE' as const),
    },
  };
}

/**
 * Routes the Temporal SDK's own logging through the level the operator chose and, with
 * `metricsBind` (TEMPORAL_METRICS_BIND, `host:port`), has the SDK's Core serve its own Prometheus
 * metrics there (`temporal_*`: task slots, poll and schedule-to-start latencies, sticky cache; see
 * docs/operations.md "Observing"). Must run before the first worker or native connection of the
 * process; later calls are ignored.
 */
export function installTemporalLogging(level: string, metricsBind?: string): void {
  // The SDK's INFO level narrates every worker state change and bundle step: keep it for debug.
  const sdkLevel = ({ debug: 'DEBUG', info: 'WARN', warn: 'WARN', error: 'ERROR', silent: 'ERROR' } as const)[level] ?? 'WARN';
  // The render worker serves activities only, by design; the SDK warns about that at every start.
  const print = new DefaultLogger(sdkLevel);
  const logger = new DefaultLogger(sdkLevel, (entry) => {
    if (!entry.message.startsWith('No workflows registered')) print.log(entry.level, entry.message, entry.meta);
  });
  try {
    Runtime.install({ logger, ...(metricsBind ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsBind } } } } : {}) });
  } catch {
    // already installed in this process (tests start several apps in one process)
  }
}
