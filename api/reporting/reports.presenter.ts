import type { ReportEntity } from '../../db/reporting/report.entity';
import type { ReportVersionEntity } from '../../db/reporting/report-version.entity';
import type { OutdatedDependency, VersionRecord } from './reports.service';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** A report (docs/reporting.md "Reports"): the draft's fields with where publishing has got to. */
export function presentReport(r: ReportEntity, outdated: OutdatedDependency[] = []) {
  const d = r.draft;
  return {
    id: r.id,
    shortId: r.shortId,
    slug: r.slug,
    name: r.name,
    description: r.description,
    folderId: r.folderId,
    templateId: d.templateId,
    templateVersion: d.templateVersion,
    datasets: d.datasets.map((ds) => ({ ...ds, bindTo: ds.bindTo ?? null })),
    parameters: d.parameters,
    outputs: d.outputs,
    filenamePattern: d.filenamePattern,
    skipIfEmpty: d.skipIfEmpty,
    useCredit: d.useCredit,
    isPublished: r.isPublished,
    latestVersion: r.latestVersion,
    publishedAt: iso(r.publishedAt),
    outdatedDependencies: outdated,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** The answer of POST …/publish. */
export function presentPublished(v: ReportVersionEntity) {
  return {
    id: v.id,
    reportId: v.reportId,
    version: v.version,
    publishedAt: iso(v.publishedAt),
    pinned: { templateVersion: v.definition.templateVersion, datasets: v.definition.datasets.map((d) => ({ name: d.name, queryVersion: d.queryVersion })) },
  };
}

/** An item of GET …/versions. */
export function presentVersion({ version: v, publishedBy }: VersionRecord) {
  return { id: v.id, version: v.version, releaseNotes: v.releaseNotes, publishedAt: iso(v.publishedAt), publishedBy };
}

/** GET …/versions/:version: the report version with its resolved definition. */
export function presentVersionDetail(record: VersionRecord) {
  const v = record.version;
  return { ...presentVersion(record), reportId: v.reportId, name: v.name, description: v.description, definition: v.definition };
}
