import { deleted, listOf, noContent, ok, pageOf, redirect } from '../openapi/operation';
import { resource } from '../openapi/resources';
import { routeTable } from '../openapi/route';
import * as channels from './channels.schema';
import * as datasources from './datasources.schema';
import * as imports from './imports.schema';
import * as jobs from './jobs.schema';
import * as queries from './queries.schema';
import * as reports from './reports.schema';
import * as runs from './runs.schema';
import * as schedules from './schedules.schema';

/**
 * The reporting routes' declarations (docs/architecture.md "One declaration per route"): datasources, queries,
 * reports, runs, schedules, jobs, channels, imports, each group mounted by its api/reporting/*.routes.ts. Apart
 * from the handlers, so that the OpenAPI document is built without loading the services
 * (api/openapi/operations.ts lists their operations). Reads take API keys with `read_reports`, runs `run_reports`;
 * designing (datasources, queries, reports) takes a user session.
 */
const id = { id: 'The id (UUID)' };
const version = { ...id, version: 'The version number' };
const waitNote = 'With `wait: true` the answer waits for the outcome a short while, else 202 with a task to poll (GET /api/reporting/tasks/{taskId}).';

const datasourceRoute = routeTable('Reporting datasources');
export const datasourceEndpoints = {
  create: datasourceRoute('post', '/api/reporting/datasources', 'Create a datasource', { security: 'team', request: { body: datasources.createDatasourceSchema }, responses: { 201: ok('The datasource (secrets never shown)', resource('Datasource')) } }),
  testUnsaved: datasourceRoute('post', '/api/reporting/datasources/test', 'Test connection settings without saving them', { security: 'team', request: { body: datasources.createDatasourceSchema }, responses: { 200: ok('The outcome', resource('DatasourceTest')) } }),
  list: datasourceRoute('get', '/api/reporting/datasources', 'List datasources', { security: 'project', request: { query: datasources.listDatasourcesSchema }, responses: { 200: ok('A page of datasources', pageOf(resource('Datasource'))) } }),
  get: datasourceRoute('get', '/api/reporting/datasources/:id', 'Get a datasource', { security: 'project', request: { params: id }, responses: { 200: ok('The datasource', resource('Datasource')) } }),
  update: datasourceRoute('patch', '/api/reporting/datasources/:id', 'Update a datasource', { security: 'team', request: { params: id, body: datasources.updateDatasourceSchema }, responses: { 200: ok('The datasource', resource('Datasource')) } }),
  delete: datasourceRoute('delete', '/api/reporting/datasources/:id', 'Delete a datasource', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  test: datasourceRoute('post', '/api/reporting/datasources/:id/test', 'Test a saved datasource', { description: waitNote, security: 'team', request: { params: id, body: datasources.testDatasourceSchema }, responses: { 200: ok('The outcome', resource('DatasourceTest')), 202: ok('Pending: the task to poll', resource('PendingAgentTask')) } }),
  uploadFile: datasourceRoute('put', '/api/reporting/datasources/:id/file', 'Upload the CSV file of a CSV datasource', { security: 'team', request: { params: id, bodyType: 'multipart', bodyDescription: 'The CSV as the multipart field `file`' }, responses: { 200: ok('The datasource', resource('Datasource')) } }),
  refreshSchema: datasourceRoute('post', '/api/reporting/datasources/:id/schema/refresh', 'Read the datasource\'s tables and columns again', { description: waitNote, security: 'team', request: { params: id, body: datasources.testDatasourceSchema }, responses: { 200: ok('The schema', resource('DiscoveredSchema')), 202: ok('Pending: the task to poll', resource('PendingAgentTask')) } }),
  health: datasourceRoute('get', '/api/reporting/datasources/:id/health', 'Recent health of a datasource', { security: 'project', request: { params: id }, responses: { 200: ok('The health', resource('DatasourceHealth')) } }),
  schema: datasourceRoute('get', '/api/reporting/datasources/:id/schema', 'Tables and columns of a datasource', { security: 'project', request: { params: id, query: datasources.schemaQuerySchema }, responses: { 200: ok('The schema', resource('DiscoveredSchema')) } }),
  getTask: datasourceRoute('get', '/api/reporting/tasks/:taskId', 'A pending datasource or preview task', { security: 'team', request: { params: { taskId: 'The task id' } }, responses: { 200: ok('The task, with its outcome once done', resource('AgentTaskWithOutcome')) } }),
};

const queryRoute = routeTable('Reporting queries');
export const queryEndpoints = {
  validate: queryRoute('post', '/api/reporting/queries/validate', 'Check a query without saving it', { security: 'team', request: { body: queries.validateQuerySchema }, responses: { 200: ok('Problems found', resource('QueryCheck')) } }),
  create: queryRoute('post', '/api/reporting/queries', 'Create a query', { security: 'team', request: { body: queries.createQuerySchema }, responses: { 201: ok('The draft query', resource('Query')) } }),
  list: queryRoute('get', '/api/reporting/queries', 'List queries', { security: 'team', request: { query: queries.listQueriesSchema }, responses: { 200: ok('A page of queries', pageOf(resource('QuerySummary'))) } }),
  get: queryRoute('get', '/api/reporting/queries/:id', 'Get a query', { security: 'team', request: { params: id }, responses: { 200: ok('The query', resource('Query')) } }),
  update: queryRoute('patch', '/api/reporting/queries/:id', 'Update a query\'s draft', { security: 'team', request: { params: id, body: queries.updateQuerySchema }, responses: { 200: ok('The query', resource('Query')) } }),
  replace: queryRoute('put', '/api/reporting/queries/:id', 'Replace a query\'s draft', {
    security: 'team',
    description: 'The draft replaced as a whole by a create body: a field left out takes the value a new query would get.',
    request: { params: id, body: queries.createQuerySchema },
    responses: { 200: ok('The query', resource('Query')) },
  }),
  delete: queryRoute('delete', '/api/reporting/queries/:id', 'Delete a query', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  publish: queryRoute('post', '/api/reporting/queries/:id/publish', 'Publish the draft as a version', { security: 'team', request: { params: id, body: queries.publishSchema }, responses: { 201: ok('The version', resource('PublishedQuery')) } }),
  versions: queryRoute('get', '/api/reporting/queries/:id/versions', 'Versions of a query', { security: 'team', request: { params: id }, responses: { 200: ok('The versions, newest first', { type: 'array', items: resource('QueryVersion') }) } }),
  version: queryRoute('get', '/api/reporting/queries/:id/versions/:version', 'Get a version of a query', { security: 'team', request: { params: version }, responses: { 200: ok('The version', resource('QueryVersionDetail')) } }),
  restore: queryRoute('post', '/api/reporting/queries/:id/versions/:version/restore', 'Publish an old version again', { security: 'team', request: { params: version, body: queries.publishSchema }, responses: { 200: ok('The new version', resource('RestoredVersion')) } }),
  preview: queryRoute('post', '/api/reporting/queries/:id/preview', 'Run a query on a few rows', { security: 'team', request: { params: id, body: queries.previewQuerySchema }, responses: { 200: ok('Columns and rows', resource('QueryPreview')), 202: ok('Pending on an agent: the task to poll', resource('PendingAgentTask')) } }),
};

const reportRoute = routeTable('Reporting reports');
export const reportEndpoints = {
  create: reportRoute('post', '/api/reporting/reports', 'Create a report', { security: 'team', request: { body: reports.createReportSchema }, responses: { 201: ok('The draft report', resource('Report')) } }),
  list: reportRoute('get', '/api/reporting/reports', 'List reports', { security: 'project', request: { query: reports.listReportsSchema }, responses: { 200: ok('A page of reports', pageOf(resource('Report'))) } }),
  get: reportRoute('get', '/api/reporting/reports/:id', 'Get a report', { security: 'project', request: { params: id }, responses: { 200: ok('The report', resource('Report')) } }),
  put: reportRoute('put', '/api/reporting/reports/:id', 'Update a report\'s draft', { security: 'team', request: { params: id, body: reports.updateReportSchema }, responses: { 200: ok('The report', resource('Report')) } }),
  patch: reportRoute('patch', '/api/reporting/reports/:id', 'Update a report\'s draft (the fields given)', { security: 'team', request: { params: id, body: reports.updateReportSchema }, responses: { 200: ok('The report', resource('Report')) } }),
  delete: reportRoute('delete', '/api/reporting/reports/:id', 'Delete a report', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  publish: reportRoute('post', '/api/reporting/reports/:id/publish', 'Publish the draft as a version', { security: 'team', request: { params: id, body: queries.publishSchema }, responses: { 201: ok('The version', resource('PublishedReport')) } }),
  preview: reportRoute('post', '/api/reporting/reports/:id/preview', 'Render a preview of a report', { security: 'team', request: { params: id, body: reports.previewReportSchema }, responses: { 200: { description: 'The draft rendered as a file, inline: PDF (watermarked), XLSX or CSV', contentType: 'application/octet-stream', schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } }),
  versions: reportRoute('get', '/api/reporting/reports/:id/versions', 'Versions of a report', { security: 'project', request: { params: id }, responses: { 200: ok('The versions, newest first', { type: 'array', items: resource('ReportVersion') }) } }),
  version: reportRoute('get', '/api/reporting/reports/:id/versions/:version', 'Get a version of a report', { security: 'project', request: { params: version }, responses: { 200: ok('The version', resource('ReportVersionDetail')) } }),
  restore: reportRoute('post', '/api/reporting/reports/:id/versions/:version/restore', 'Publish an old version again', { security: 'team', request: { params: version, body: queries.publishSchema }, responses: { 200: ok('The new version', resource('RestoredVersion')) } }),
};

const runRoute = routeTable('Reporting runs');
export const runEndpoints = {
  start: runRoute('post', '/api/reporting/reports/:id/runs', 'Run a report', { security: 'project', idempotent: true, request: { params: id, body: runs.startRunSchema }, responses: { 201: { ...ok('The run, queued', resource('AcceptedRun')), headers: { Location: 'The run\'s status URL (the same as `statusUrl`)' } } } }),
  list: runRoute('get', '/api/reporting/runs', 'List report runs', { security: 'project', request: { query: runs.listRunsSchema }, responses: { 200: ok('A page of runs', pageOf(resource('ReportRun'))) } }),
  export: runRoute('get', '/api/reporting/runs/export', 'Export report runs', { security: 'project', request: { query: runs.exportRunsSchema }, responses: { 200: { description: 'The export file', contentType: 'text/csv', schema: { type: 'string' } } } }),
  get: runRoute('get', '/api/reporting/runs/:id', 'Get a report run', { security: 'project', request: { params: id }, responses: { 200: ok('The run with its outputs', resource('ReportRun')) } }),
  cancel: runRoute('post', '/api/reporting/runs/:id/cancel', 'Cancel a report run', { security: 'project', request: { params: id }, responses: { 200: ok('The cancelled run', resource('ReportRun')) } }),
  retry: runRoute('post', '/api/reporting/runs/:id/retry', 'Run a failed report run again', { security: 'project', request: { params: id, body: runs.retryRunSchema }, responses: { 201: { ...ok('The new run', resource('AcceptedRun')), headers: { Location: 'The new run\'s status URL (the same as `statusUrl`)' } }, 200: ok('`deliveriesOnly`: the same run, its failed deliveries sent again', resource('AcceptedRun')) } }),
  deliveries: runRoute('get', '/api/reporting/runs/:id/deliveries', 'Deliveries of a report run', { security: 'project', request: { params: id }, responses: { 200: ok('The deliveries, with their attempts', listOf(resource('ReportDelivery'))) } }),
  retryDelivery: runRoute('post', '/api/reporting/deliveries/:deliveryId/retry', 'Deliver a report output again', { security: 'project', request: { params: { deliveryId: 'The delivery id' } }, responses: { 200: ok('Re-enqueued', { type: 'object', required: ['success', 'deliveryId', 'status', 'message'], properties: { success: { type: 'boolean', const: true }, deliveryId: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['pending', 'delivering', 'completed', 'failed', 'skipped'] }, message: { type: 'string' } }, additionalProperties: false }) } }),
  download: runRoute('get', '/api/reporting/runs/:id/outputs/:outputId/download', 'Download an output of a run', { security: 'project', request: { params: { ...id, outputId: 'The output id' } }, responses: { 302: redirect('To a signed download link') } }),
};

const scheduleRoute = routeTable('Reporting schedules');
export const scheduleEndpoints = {
  validate: scheduleRoute('post', '/api/reporting/schedules/validate', 'Check a cron expression and show its next times', { security: 'team', request: { body: schedules.validateCronSchema }, responses: { 200: ok('Valid or not, with the next fire times', resource('CronCheck')) } }),
  create: scheduleRoute('post', '/api/reporting/schedules', 'Create a schedule', { security: 'team', request: { body: schedules.createScheduleSchema }, responses: { 201: ok('The schedule', resource('ReportSchedule')) } }),
  list: scheduleRoute('get', '/api/reporting/schedules', 'List schedules', { security: 'project', request: { query: schedules.listSchedulesSchema }, responses: { 200: ok('A page of schedules', pageOf(resource('ReportSchedule'))) } }),
  get: scheduleRoute('get', '/api/reporting/schedules/:id', 'Get a schedule', { security: 'project', request: { params: id }, responses: { 200: ok('The schedule', resource('ReportSchedule')) } }),
  update: scheduleRoute('patch', '/api/reporting/schedules/:id', 'Update a schedule', { security: 'team', request: { params: id, body: schedules.updateScheduleSchema }, responses: { 200: ok('The schedule', resource('ReportSchedule')) } }),
  delete: scheduleRoute('delete', '/api/reporting/schedules/:id', 'Delete a schedule', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  pause: scheduleRoute('post', '/api/reporting/schedules/:id/pause', 'Pause a schedule', { security: 'team', request: { params: id, body: schedules.pauseScheduleSchema }, responses: { 200: ok('The schedule', resource('ReportSchedule')) } }),
  resume: scheduleRoute('post', '/api/reporting/schedules/:id/resume', 'Resume a schedule', { security: 'team', request: { params: id, body: schedules.resumeScheduleSchema }, responses: { 200: ok('The schedule', resource('ReportSchedule')) } }),
  trigger: scheduleRoute('post', '/api/reporting/schedules/:id/trigger', 'Run a schedule now', { security: 'project', request: { params: id }, responses: { 201: { ...ok('The run or job run it started, queued', resource('TriggeredSchedule')), headers: { Location: 'The run\'s status URL (the same as `statusUrl`)' } }, 200: ok('Skipped: a run of the schedule is still going (`skipped: "overlap"`)', resource('TriggeredSchedule')), 202: ok('Triggered, but its run was not recorded within 5 s: it appears in the schedule\'s runs', resource('TriggeredSchedule')) } }),
};

const jobRoute = routeTable('Reporting jobs');
export const jobEndpoints = {
  create: jobRoute('post', '/api/reporting/jobs', 'Create a job (several reports run together)', { security: 'team', request: { body: jobs.createJobSchema }, responses: { 201: ok('The job', resource('ReportJob')) } }),
  list: jobRoute('get', '/api/reporting/jobs', 'List jobs', { security: 'project', request: { query: jobs.listJobsSchema }, responses: { 200: ok('A page of jobs', pageOf(resource('ReportJob'))) } }),
  get: jobRoute('get', '/api/reporting/jobs/:id', 'Get a job', { security: 'project', request: { params: id }, responses: { 200: ok('The job', resource('ReportJob')) } }),
  put: jobRoute('put', '/api/reporting/jobs/:id', 'Update a job', { security: 'team', request: { params: id, body: jobs.updateJobSchema }, responses: { 200: ok('The job', resource('ReportJob')) } }),
  patch: jobRoute('patch', '/api/reporting/jobs/:id', 'Update a job (the fields given)', { security: 'team', request: { params: id, body: jobs.updateJobSchema }, responses: { 200: ok('The job', resource('ReportJob')) } }),
  delete: jobRoute('delete', '/api/reporting/jobs/:id', 'Delete a job', { security: 'team', request: { params: id }, responses: { 200: deleted() } }),
  startRun: jobRoute('post', '/api/reporting/jobs/:id/runs', 'Run a job', { security: 'project', idempotent: true, request: { params: id, body: jobs.startJobRunSchema }, responses: { 201: { ...ok('The job run, queued', resource('AcceptedJobRun')), headers: { Location: 'The job run\'s status URL (the same as `statusUrl`)' } } } }),
  listRuns: jobRoute('get', '/api/reporting/job-runs', 'List job runs', { security: 'project', request: { query: jobs.listJobRunsSchema }, responses: { 200: ok('A page of job runs', pageOf(resource('ReportJobRun'))) } }),
  getRun: jobRoute('get', '/api/reporting/job-runs/:id', 'Get a job run', { security: 'project', request: { params: id }, responses: { 200: ok('The job run', resource('ReportJobRun')) } }),
  runDeliveries: jobRoute('get', '/api/reporting/job-runs/:id/deliveries', 'Deliveries of a job run', { security: 'project', request: { params: id }, responses: { 200: ok('The deliveries, with their attempts', listOf(resource('ReportDelivery'))) } }),
  cancelRun: jobRoute('post', '/api/reporting/job-runs/:id/cancel', 'Cancel a job run', { security: 'project', request: { params: id }, responses: { 200: ok('The job run, cancelled', resource('ReportJobRun')) } }),
  retryDeliveries: jobRoute('post', '/api/reporting/job-runs/:id/retry-deliveries', 'Deliver a job run\'s failed deliveries again', { security: 'project', request: { params: id }, responses: { 202: ok('Re-enqueued', { type: 'object', required: ['success', 'jobRunId', 'retried', 'message'], properties: { success: { type: 'boolean', const: true }, jobRunId: { type: 'string', format: 'uuid' }, retried: { type: 'integer', description: 'Failed deliveries sent again' }, message: { type: 'string' } }, additionalProperties: false }) } }),
};

const channelRoute = routeTable('Reporting channels');
export const channelEndpoints = {
  create: channelRoute('post', '/api/reporting/channels', 'Create a delivery channel', { security: 'team', request: { body: channels.createChannelSchema }, responses: { 201: ok('The channel (secrets never shown; a webhook\'s signing secret this once)', resource('CreatedReportChannel')) } }),
  list: channelRoute('get', '/api/reporting/channels', 'List channels', { security: 'project', request: { query: channels.listChannelsSchema }, responses: { 200: ok('A page of channels', pageOf(resource('ReportChannel'))) } }),
  get: channelRoute('get', '/api/reporting/channels/:id', 'Get a channel', { security: 'project', request: { params: id }, responses: { 200: ok('The channel', resource('ReportChannel')) } }),
  update: channelRoute('patch', '/api/reporting/channels/:id', 'Update a channel', { security: 'team', request: { params: id, body: channels.updateChannelSchema }, responses: { 200: ok('The channel', resource('ReportChannel')) } }),
  delete: channelRoute('delete', '/api/reporting/channels/:id', 'Delete a channel', { security: 'team', request: { params: id }, responses: { 204: noContent } }),
  test: channelRoute('post', '/api/reporting/channels/:id/test', 'Send a test through a channel (e-mail: one message to the caller only; verified sender; 429 ERR_LIMIT_012/013 past the re-send budgets)', { security: 'team', request: { params: id, body: channels.testChannelSchema }, responses: { 200: ok('The outcome', resource('ChannelTestOutcome')) } }),
};

const importRoute = routeTable('Reporting imports');
export const importEndpoints = {
  create: importRoute('post', '/api/reporting/imports', 'Import reports from another tool (JRXML, …)', {
    security: 'team',
    request: { body: imports.importSchema, bodyType: 'multipart' },
    responses: { 201: ok('The import and what it created', resource('ReportImport')), 200: ok('A dry run: what it would create', resource('ReportImport')) },
  }),
  list: importRoute('get', '/api/reporting/imports', 'List imports', { security: 'team', request: { query: imports.listImportsSchema }, responses: { 200: ok('A page of imports', pageOf(resource('ReportImportSummary'))) } }),
  get: importRoute('get', '/api/reporting/imports/:id', 'Get an import', { security: 'team', request: { params: id }, responses: { 200: ok('The import', resource('ReportImport')) } }),
};
