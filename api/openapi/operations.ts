import { agentsOperations } from '../agents/agents.openapi';
import { assetOperations } from '../assets/assets.openapi';
import { documentOperations } from '../documents/documents.openapi';
import { signingCertificateOperations } from '../documents/signing-certificates.openapi';
import { analyticsEndpoints } from '../flow/analytics.endpoints';
import { approvalEndpoints, gateEndpoints, reviewEndpoints, reviewPageEndpoints, runEndpoints } from '../flow/flow.endpoints';
import { healthOperations } from '../health/health.openapi';
import { identityOperations } from '../identity/identity.openapi';
import { oauthOperations } from '../identity/oauth.openapi';
import { mcpOperations } from '../mcp/mcp.openapi';
import { reportingOperations } from '../reporting/reporting.openapi';
import { storageOperations } from '../storage/storage.openapi';
import { templateOperations } from '../templates/templates.openapi';
import { embedOperations } from '../templates/embed.openapi';
import { webhookOperations } from '../webhooks/webhooks.endpoints';
import { buildOpenApiDocument } from './document';
import { openApiOperations } from './openapi.openapi';
import type { Operation } from './operation';
import { operationsOf } from './route';

/** The version of the API the document describes (paths under /api/v1 keep theirs). */
const API_VERSION = '1.0.0';

export interface OperationOptions {
  /** BATCH_MAX_DOCUMENTS: the batch body's limit. */
  batchMaxDocuments: number;
}

/** Every operation of the API, one table per domain. A new domain's table is added here. */
export function allOperations(options: OperationOptions): Operation[] {
  return [
    ...healthOperations,
    ...openApiOperations,
    ...identityOperations,
    ...oauthOperations,
    ...templateOperations,
    ...embedOperations,
    ...assetOperations,
    ...documentOperations(options.batchMaxDocuments),
    ...signingCertificateOperations,
    ...webhookOperations,
    ...operationsOf(gateEndpoints),
    ...operationsOf(runEndpoints),
    ...operationsOf(analyticsEndpoints),
    ...operationsOf(approvalEndpoints),
    ...operationsOf(reviewEndpoints),
    ...operationsOf(reviewPageEndpoints),
    ...reportingOperations,
    ...agentsOperations,
    ...storageOperations,
    ...mcpOperations,
  ];
}

/** The OpenAPI document served at /api/openapi.json. */
export function openApiDocument(options: OperationOptions & { serverUrl: string }): Record<string, unknown> {
  return buildOpenApiDocument(allOperations(options), { serverUrl: options.serverUrl, version: API_VERSION });
}
