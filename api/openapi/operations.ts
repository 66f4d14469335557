import { agentsOperations } from '../agents/agents.endpoints';
import { assetOperations } from '../assets/assets.endpoints';
import { documentOperations } from '../documents/documents.endpoints';
import { signingCertificateOperations } from '../documents/signing-certificates.endpoints';
import { flowOperations } from '../flow/flow.openapi';
import { healthOperations } from '../health/health.endpoints';
import { identityOperations } from '../identity/identity.endpoints';
import { oauthOperations } from '../identity/oauth.endpoints';
import { mcpOperations } from '../mcp/mcp.endpoints';
import { operationsOf } from './route';
import { channelEndpoints, datasourceEndpoints, importEndpoints, jobEndpoints, queryEndpoints, reportEndpoints, runEndpoints, scheduleEndpoints } from '../reporting/reporting.endpoints';
import { storageOperations } from '../storage/storage.endpoints';
import { templateOperations } from '../templates/templates.endpoints';
import { embedOperations } from '../templates/embed.endpoints';
import { webhookOperations } from '../webhooks/webhooks.endpoints';
import { buildOpenApiDocument } from './document';
import { openApiOperations } from './openapi.endpoints';
import type { Operation } from './operation';

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
    ...flowOperations,
    ...operationsOf(datasourceEndpoints),
    ...operationsOf(queryEndpoints),
    ...operationsOf(reportEndpoints),
    ...operationsOf(runEndpoints),
    ...operationsOf(scheduleEndpoints),
    ...operationsOf(jobEndpoints),
    ...operationsOf(channelEndpoints),
    ...operationsOf(importEndpoints),
    ...agentsOperations,
    ...storageOperations,
    ...mcpOperations,
  ];
}

/** The OpenAPI document served at /api/openapi.json. */
export function openApiDocument(options: OperationOptions & { serverUrl: string }): Record<string, unknown> {
  return buildOpenApiDocument(allOperations(options), { serverUrl: options.serverUrl, version: API_VERSION });
}
