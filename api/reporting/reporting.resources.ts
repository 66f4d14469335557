import type { JsonSchema } from '../openapi/operation';

/**
 * JSON Schemas of reporting's reports, schedules, jobs, channels, deliveries and imports as their
 * presenters write them (api/reporting/{reports,schedules,jobs,channels,imports}.presenter.ts,
 * api/deliveries/delivery.presenter.ts presentReportDelivery), components of the OpenAPI document beside
 * api/openapi/resources.ts. Objects list every field (no others); nested free-form parts (parameter
 * values, a channel's config per kind, a test's details) stay open.
 */

const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const uuid = { type: 'string', format: 'uuid' };
const time = { type: 'string', format: 'date-time' };
const open = { type: 'object', additionalProperties: true };
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
const list = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
const oneOf = (...values: string[]) => ({ type: 'string', enum: values });

function object(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), required: Object.keys(required), properties: { ...required, ...optional }, additionalProperties: false };
}

const format = oneOf('pdf', 'excel', 'csv');
const versionRef = { type: ['string', 'integer'], description: '`latest` or a version number' };

const report = object(
  {
    id: uuid,
    shortId: str,
    slug: str,
    name: str,
    description: nullable(str),
    folderId: nullable(str),
    templateId: nullable({ ...uuid, description: 'null for a CSV-only report' }),
    templateVersion: { type: ['string', 'integer', 'null'], description: '`latest`, a version number, or null without a template' },
    datasets: list(
      object(
        {
          name: str,
          queryId: uuid,
          queryVersion: versionRef,
          parameters: { ...open, description: 'Query parameter → `"{{reportParameter}}"` or a literal' },
          shape: oneOf('rows', 'first_row', 'value'),
          bindTo: nullable({ type: 'string', description: 'The template variable; null: the dataset\'s name' }),
        },
        {},
        'A dataset: a query\'s rows bound to a template variable',
      ),
    ),
    parameters: list({ ...open, description: 'A report parameter, in the query parameters\' shape (docs/reporting.md "Query text")' }),
    outputs: list(object({ format }, { datasets: list(str) })),
    filenamePattern: str,
    skipIfEmpty: bool,
    useCredit: bool,
    isPublished: bool,
    latestVersion: { ...int, description: '0 before the first publish' },
    publishedAt: nullable(time),
    outdatedDependencies: list(
      object({ type: oneOf('template', 'query'), id: uuid, name: str, pinnedVersion: int, latestVersion: int }, { dataset: str }, 'A template or query the newest version pins that has a newer published version'),
    ),
    createdAt: time,
    updatedAt: time,
  },
  {},
  'A report: its draft and where publishing has got to (api/reporting/reports.presenter.ts)',
);

const publishedReport = object(
  { id: uuid, reportId: uuid, version: int, publishedAt: time, pinned: object({ templateVersion: nullable(int), datasets: list(object({ name: str, queryVersion: int })) }) },
  {},
  'A report version as published, with what it pins',
);

const reportVersion = object({ id: uuid, version: int, releaseNotes: nullable(str), publishedAt: time, publishedBy: { description: 'Who published it' } }, {}, 'A published version of a report');

const reportVersionDetail = object(
  {
    id: uuid,
    version: int,
    releaseNotes: nullable(str),
    publishedAt: time,
    publishedBy: { description: 'Who published it' },
    reportId: uuid,
    name: str,
    description: nullable(str),
    definition: {
      type: 'object',
      description: 'What a run of this version reads, every version pinned (db/reporting/report.entity.ts PinnedDefinition)',
      required: ['templateId', 'templateVersion', 'datasets', 'parameters', 'outputs', 'filenamePattern', 'skipIfEmpty', 'useCredit'],
      properties: {
        templateId: nullable(uuid),
        templateVersion: nullable(int),
        datasets: list({ ...open, description: 'As the report\'s datasets, `queryVersion` a number' }),
        parameters: list(open),
        outputs: list(open),
        filenamePattern: str,
        skipIfEmpty: bool,
        useCredit: bool,
      },
      additionalProperties: true,
    },
  },
  {},
  'A published version of a report with its definition',
);

/** `{success, newVersion, message}`: an old version published again (queries and reports). */
const restoredVersion = object({ success: { type: 'boolean', const: true }, newVersion: int, message: str }, {}, 'An old version published again as a new one');

const cronProblem = object({ path: oneOf('cron', 'timezone'), code: str, message: str });
const cronWarning = object({ code: oneOf('DST_GAP', 'DST_OVERLAP'), message: str, dates: list(str) }, {}, 'A daylight-saving change ahead');

const schedule = object(
  {
    id: uuid,
    shortId: str,
    name: str,
    target: object({ type: oneOf('report', 'job'), id: uuid }),
    cron: str,
    timezone: str,
    description: nullable({ type: 'string', description: 'The cron in words ("At 07:30 on Monday–Friday (Europe/Berlin)")' }),
    parameters: open,
    channelIds: list(uuid),
    outputs: nullable(list(format)),
    skipIfEmpty: nullable(bool),
    status: oneOf('active', 'paused'),
    pauseNote: nullable(str),
    catchupWindowMinutes: int,
    startAt: nullable(time),
    endAt: nullable(time),
    nextRunTimes: nullable({ ...list(time), description: "Temporal's next five fire times; null in lists and while the Temporal Schedule is missing" }),
    lastRun: nullable(object({ status: str, scheduledFor: nullable(time) }, { runId: uuid, jobRunId: uuid })),
    missedRuns: nullable(int),
    skippedOverlapRuns: nullable(int),
    warnings: list(cronWarning),
    createdAt: time,
    updatedAt: time,
  },
  {},
  'A report schedule (api/reporting/schedules.presenter.ts)',
);

const cronCheck = object(
  {
    valid: bool,
    errors: list(cronProblem),
    warnings: list(cronWarning),
    description: nullable(str),
    timezone: nullable({ type: 'string', description: 'The zone in its proper spelling; null when invalid' }),
    nextRunTimes: { ...list(time), description: 'The next `count` fire times after now (empty when invalid): wall-clock time in the zone, a skipped time left out, a repeated one once' },
  },
  {},
  'A cron expression and zone checked, with the next fire times',
);

const triggered = object(
  { triggered: bool, skipped: nullable(str), runId: nullable(uuid), shortId: nullable(str), status: nullable(str), scheduledFor: nullable(time), statusUrl: { ...nullable(str), description: 'The run\'s absolute status URL, also in `Location` (null when skipped or not yet recorded)' }, jobRunId: nullable(uuid) },
  {},
  'A schedule run now: the run it opened, or `skipped: "overlap"`',
);

const deliveryAttempt = object({ number: int, at: time, error: nullable(str), durationMs: int }, { statusCode: { ...int, description: 'HTTP status, or the SMTP reply code of an e-mail' } });
const deliveryStatus = oneOf('pending', 'delivering', 'completed', 'failed', 'skipped');

const reportDelivery = object(
  {
    id: uuid,
    shortId: str,
    runId: nullable(uuid),
    jobRunId: nullable(uuid),
    channelId: nullable(uuid),
    kind: str,
    target: str,
    status: deliveryStatus,
    attempts: list(deliveryAttempt),
    nextAttemptAt: nullable(time),
    remoteRef: nullable(str),
    note: nullable(str),
    createdAt: time,
    completedAt: nullable(time),
  },
  {},
  'A delivery of a run (or job run) to one target of a channel, with its attempts',
);

const channelTest = object({ at: time, ok: bool, durationMs: int, error: nullable(str), details: nullable(open) });

const channelFields = {
  id: uuid,
  shortId: str,
  name: str,
  kind: oneOf('email', 'slack', 'teams', 'webhook', 's3', 'sftp', 'webdav'),
  config: { ...open, description: "Per kind; a webhook's header values read `{\"set\": true}`" },
  secrets: { type: 'object', additionalProperties: object({ set: { type: 'boolean', const: true }, updatedAt: time }), description: 'Write-only: only that each is set' },
  isActive: bool,
  lastTest: nullable(channelTest),
  createdAt: time,
  updatedAt: time,
};
const channel = object(channelFields, {}, 'A delivery channel; secrets never shown (api/reporting/channels.presenter.ts)');
const createdChannel = object(channelFields, { secret: { type: 'string', description: "A webhook channel's signing secret (`whsec_…`): only this answer shows it" } }, 'A channel as created');
const channelTestOutcome = object({ ok: bool, durationMs: int }, { error: { type: 'string', description: 'In our words, never a remote body' }, details: open }, 'The outcome of a channel test (`ok: false` is an answer too)');

const importItem = object(
  {
    source: object({ type: oneOf('card', 'query', 'jrxml'), name: str, ref: nullable(str) }),
    action: oneOf('created', 'overwritten', 'skipped', 'needs_attention', 'unsupported'),
    warnings: list(object({ code: str, message: str, path: str })),
  },
  { queryId: uuid, reportId: uuid, templateId: uuid, suggestedSchedule: object({ cron: str, timezone: str }) },
  'What one item of the file became',
);
const importFields = { id: uuid, shortId: str, format: oneOf('metabase', 'redash', 'jrxml'), filename: str, status: oneOf('completed', 'completed_with_warnings', 'failed'), dryRun: bool, createdAt: time };
const reportImport = object({ ...importFields, items: list(importItem) }, {}, 'An import with what each item became');
const reportImportSummary = object({ ...importFields, itemCount: int }, {}, 'An import as listed');

const job = object(
  {
    id: uuid,
    shortId: str,
    name: str,
    description: nullable(str),
    items: list(object({ reportId: uuid, parameters: open }, { outputs: list(format) })),
    delivery: oneOf('bundle', 'separate'),
    concurrency: int,
    stopOnFailure: bool,
    channelIds: list(uuid),
    createdAt: time,
    updatedAt: time,
  },
  {},
  'A report job: several reports run together (api/reporting/jobs.presenter.ts)',
);

const jobRun = object(
  {
    id: uuid,
    shortId: str,
    jobId: uuid,
    trigger: str,
    scheduleId: nullable(uuid),
    scheduledFor: time,
    timezone: str,
    status: str,
    skipReason: nullable(str),
    items: list(object({ reportId: uuid, runId: nullable(uuid), status: str }, { error: open })),
    totalRuns: int,
    completedRuns: int,
    failedRuns: int,
    deliveryStatus: nullable(str),
    channelIds: list(uuid),
    deliveries: list(open),
    error: {},
    metadata: {},
    createdAt: time,
    startedAt: nullable(time),
    completedAt: nullable(time),
  },
  {},
  'A run of a job',
);
const acceptedJobRun = object({ jobRunId: uuid, shortId: str, status: str, statusUrl: { type: 'string', format: 'uri', description: 'The job run\'s absolute status URL, also in `Location`' } }, {}, 'A job run, queued; follow `statusUrl`');

/** Reporting's `components.schemas` entries (api/openapi/resources.ts takes them in). */
export const REPORTING_RESOURCE_SCHEMAS: Record<string, JsonSchema> = {
  Report: report,
  PublishedReport: publishedReport,
  ReportVersion: reportVersion,
  ReportVersionDetail: reportVersionDetail,
  RestoredVersion: restoredVersion,
  ReportSchedule: schedule,
  CronCheck: cronCheck,
  TriggeredSchedule: triggered,
  ReportDelivery: reportDelivery,
  ReportChannel: channel,
  CreatedReportChannel: createdChannel,
  ChannelTestOutcome: channelTestOutcome,
  ReportImport: reportImport,
  ReportImportSummary: reportImportSummary,
  ReportJob: job,
  ReportJobRun: jobRun,
  AcceptedJobRun: acceptedJobRun,
};
