import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Services } from '../platform/services';
import { authenticate, type CredentialResolver } from './middleware/authenticate';
import { credentialFence } from './middleware/credential-fence';
import { errorRenderer } from './middleware/errors';
import { exceptFlowSubmissions } from './flow/submission-body';
import { exceptTemplateChecks } from './templates/check-body';
import { mcpRoutes } from './mcp/mcp.routes';
import { jsonDepthLimit } from './middleware/json-depth';
import { requireHttps } from './middleware/https';
import { rateLimit } from './middleware/rate-limit';
import { requestId } from './middleware/request-id';
import { httpMetrics } from './middleware/http-metrics';
import { contentTypePolicy } from './middleware/content-types';
import { securityHeaders } from './middleware/security-headers';
import { createLimiterFactory } from './rate-limits';
import { healthRoutes } from './health/health.routes';
import { openApiRoutes } from './openapi/openapi.routes';
import { authRoutes } from './identity/auth.routes';
import { apiKeyRoutes } from './identity/api-keys.routes';
import { oauthClientRoutes } from './identity/oauth-clients.routes';
import { exceptOAuthToken, oauthTokenRoutes } from './identity/oauth-token.routes';
import { teamRoutes } from './identity/teams.routes';
import { accountPageRoutes } from './identity/account-pages.routes';
import { invitationPageRoutes } from './identity/invitation-page.routes';
import { accountRestoreRoutes } from './identity/account-restore.routes';
import { createSecondFactorCheck } from './identity/two-factor.service';
import { twoFactorRoutes } from './identity/two-factor.routes';
import { userRoutes } from './identity/users.routes';
import { createApiKeyUsageRecorder } from './identity/api-key-usage';
import { CredentialCache } from './identity/credential-cache';
import { createFileRoutes, fileLinkOwner } from './storage/storage.routes';
import { webhookRoutes } from './webhooks/webhooks.routes';
import { createFlowApi } from './flow/flow-api';
import { approvalRoutes } from './flow/approvals.routes';
import { reviewRoutes } from './flow/review.routes';
import { reviewPageRoutes } from './flow/review-page.routes';
import { reviewTokenResolver } from './flow/review.service';
import { documentRoutes } from './documents/documents.routes';
import { signingCertificateRoutes } from './documents/signing-certificates.routes';
import { templateRouters } from './templates/templates.routes';
import { assetRoutes } from './assets/assets.routes';
import { agentTaskRoutes, datasourceRoutes } from './reporting/datasources.routes';
import { queryRoutes } from './reporting/queries.routes';
import { reportRoutes } from './reporting/reports.routes';
import { runRoutes } from './reporting/runs.routes';
import { scheduleRoutes } from './reporting/schedules.routes';
import { jobRoutes } from './reporting/jobs.routes';
import { channelRoutes } from './reporting/channels.routes';
import { importRoutes } from './reporting/imports.routes';
import { agentRouters } from './agents/agents.routes';
import { closeTaskSignals } from './agents/task-signals';
import { LocalStorage } from '../adapters/storage/local-storage';
import { webApp } from './web/web-app';
import { embedRoutes } from './templates/embed.routes';
import { embedTokenResolver } from './templates/embed.service';
import { embedFence } from './templates/embed-fence';

export interface AppOptions {
  /** Default: Flow review tokens (`fmrv_…`, api/flow/review.service.ts). */
  credentialResolvers?: CredentialResolver[];
  /** Usage sink for requests made with an API key; default: the batching recorder over `services.db`. */
  onApiKeyUse?: (apiKeyId: string) => void;
  /**
   * Routers mounted after the product's, behind every middleware of the app; `guards.flowWrite` is
   * the guard of Flow submissions. Only the benchmarks use it, for their baseline routes
   * (scripts/bench-validate.ts): the product has none.
   */
  extraRouters?: (guards: { flowWrite: Middleware }) => Router[];
}

/** The Koa app plus what it owns beyond requests. */
export type FormworkApp = Koa & {
  /** Stops the app's timers and writes what it buffered (API-key usage); call once the server stopped accepting. */
  shutdown(): Promise<void>;
  /** Resolves once this process has seen every credential change committed before the call (CredentialCache.fence). */
  syncCredentials(): Promise<void>;
};

/**
 * The HTTP API. Order matters: request id and the error renderer wrap everything; credentials are
 * resolved and the rate limit applied before bodies are parsed, so even a 400 or 413 carries the
 * rate-limit headers.
 */
export function createApp(services: Services, options: AppOptions = {}): FormworkApp {
  const { config, db, logger } = services;
  // TRUST_PROXY hops: ctx.ip is the address the outermost trusted proxy saw, whatever the client put in X-Forwarded-For.
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: config.proxyHops });
  app.silent = true;

  const secondFactor = createSecondFactorCheck(db);
  const flow = createFlowApi(services);
  // The dashboard; the links in e-mails open its pages (docs/web.md).
  const web = webApp();
  const routers: Router[] = [
    healthRoutes(services),
    openApiRoutes(services),
    // identity
    authRoutes(services, secondFactor),
    invitationPageRoutes(services, secondFactor, web.page),
    accountRestoreRoutes(services),
    accountPageRoutes(services, web.page),
    userRoutes(services),
    twoFactorRoutes(services),
    apiKeyRoutes(services),
    oauthClientRoutes(services),
    oauthTokenRoutes(services),
    teamRoutes(services),
    // documents
    ...templateRouters(services),
    // the designer in another site's page (docs/embedding.md)
    embedRoutes(services, web.page),
    assetRoutes(services),
    documentRoutes(services, '/api/documents'),
    documentRoutes(services, '/api/v1/documents'),
    signingCertificateRoutes(services),
    webhookRoutes(services),
    // flow
    ...flow.routers,
    approvalRoutes(services),
    reviewRoutes(services),
    reviewPageRoutes(services, web.page),
    // reporting
    datasourceRoutes(services),
    agentTaskRoutes(services),
    queryRoutes(services),
    reportRoutes(services),
    runRoutes(services),
    scheduleRoutes(services),
    jobRoutes(services),
    channelRoutes(services),
    importRoutes(services),
    ...agentRouters(services),
  ];
  if (services.storage instanceof LocalStorage) routers.push(createFileRoutes(services.storage));
  routers.push(...(options.extraRouters?.({ flowWrite: flow.deps.write }) ?? []));

  app.use(requestId);
  // Every request's route template, status and duration (formwork_http_request_duration_seconds).
  app.use(httpMetrics);
  app.use(securityHeaders(config.production));
  app.use(errorRenderer(logger));
  app.use(requireHttps(config.production, config.proxyHops));
  const usage = options.onApiKeyUse ? undefined : createApiKeyUsageRecorder({ db, logger, flushMs: config.apiKeys.usageFlushMs });
  const onApiKeyUse = options.onApiKeyUse ?? usage?.record;
  // Working API keys and OAuth tokens are kept for seconds and evicted on change, on every replica (docs/performance.md).
  const credentials = new CredentialCache(db, {
    ttlMs: config.apiKeys.credentialCacheTtlMs,
    onError: (err) => logger.warn('credential cache: LISTEN connection lost; reading credentials on every call until it is back', { err }),
  });
  app.use(authenticate({ db, jwtSecret: services.secret, resolvers: [...(options.credentialResolvers ?? [reviewTokenResolver(db)]), embedTokenResolver(db)], onApiKeyUse, credentials }));
  // An embed token reaches the embedded designer's own calls and nothing else (docs/embedding.md).
  app.use(embedFence);
  app.use(credentialFence(credentials));
  // Signed download links spend their project's own budget (RATE_LIMIT_FILE_LINKS), not the anonymous one.
  const capabilityOwner = services.storage instanceof LocalStorage ? fileLinkOwner(services.storage) : undefined;
  app.use(rateLimit(config.limits.perMinute, createLimiterFactory(services.redis, config.temporal.taskQueuePrefix), capabilityOwner));
  // MCP (docs/mcp.md) reads its own messages, so it is mounted before the body parser (api/mcp/mcp.routes.ts).
  const mcp = mcpRoutes(services, flow.deps);
  app.use(mcp.routes()).use(mcp.allowedMethods());
  // A body of a type its route does not take is refused unread (415), before any parser reads it (docs/errors.md "Methods and content types").
  app.use(contentTypePolicy(routers));
  // Flow submissions read their own body after their guard, with the 1 MB limit (api/flow/submission-body.ts);
  // template checks hand their JSON body's bytes to the evaluation workers (api/templates/check-body.ts).
  app.use(
    // OAuth token requests read their own small body (api/identity/oauth-token.routes.ts).
    exceptOAuthToken(exceptFlowSubmissions(exceptTemplateChecks(koaBody({
      jsonLimit: config.jsonBodyLimit,
      textLimit: config.jsonBodyLimit,
      formLimit: config.jsonBodyLimit,
      jsonStrict: false,
      includeUnparsed: true,
      // The spec has DELETE calls with bodies (bulk job delete, account deletion).
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      // Multipart bodies are parsed only by the file routes, after their guards (api/middleware/uploads.ts).
      multipart: false,
    })))),
  );
  app.use(jsonDepthLimit);
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  // The dashboard, for what no route took (docs/web.md).
  app.use(web.middleware);
  return Object.assign(app, {
    syncCredentials: () => credentials.fence(),
    shutdown: async () => {
      await usage?.stop();
      await credentials.close();
      await closeTaskSignals(db);
    },
  });
}
