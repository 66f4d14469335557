import { agentsOperations } from '../agents/agents.endpoints';
import { assetOperations } from '../assets/assets.endpoints';
import { documentOperations } from '../documents/documents.endpoints';
import { signingCertificateOperations } from '../documents/signing-certificates.endpoints';
import { analyticsEndpoints } from '../flow/analytics.endpoints';
import { approvalEndpoints, gateEndpoints, reviewEndpoints, reviewPageEndpoints, runEndpoints as flowRunEndpoints } from '../flow/flow.endpoints';
import { healthOperations } from '../health/health.endpoints';
import { identityOperations } from '../identity/identity.endpoints';
import { oauthOperations } from '../identity/oauth.endpoints';
import { mcpOperations } from '../mcp/mcp.endpoints';
import { channelEndpoints, datasourceEndpoints, importEndpoints, jobEndpoints, queryEndpoints, reportEndpoints, runEndpoints as reportRunEndpoints, scheduleEndpoints } from '../reporting/reporting.endpoints';
import { storageOperations } from '../storage/storage.endpoints';
import { templateOperations } from '../templates/templates.endpoints';
import { embedOperations } from '../templates/embed.endpoints';
import { webhookOperations } from '../webhooks/webhooks.endpoints';
import { buildOpenApiDocument } from './document';
import { openApiOperations } from './openapi.endpoints';
import type { Operation } from './operation';
import { operationsOf } from './route';

/** The version of the API the document describes (paths under /api/v1 keep theirs). */
const API_VERSION = '1.0.0';

export interface OperationOptions {
  /** BATCH_MAX_DOCUMENTS: the batch body's limit. */
  batchMaxDocuments: number;
}

/** Every operation of the API, from each domain's route declarations (its `*.endpoints.ts`). A new domain's are added here. */
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
    ...operationsOf(flowRunEndpoints),
    ...operationsOf(analyticsEndpoints),
    ...operationsOf(approvalEndpoints),
    ...operationsOf(reviewEndpoints),
    ...operationsOf(reviewPageEndpoints),
    ...operationsOf(datasourceEndpoints),
    ...operationsOf(queryEndpoints),
    ...operationsOf(reportEndpoints),
    ...operationsOf(reportRunEndpoints),
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
