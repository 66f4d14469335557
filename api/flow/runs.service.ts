import type { Readable } from 'node:stream';
import type { DataSource } from 'typeorm';
import type { ArtefactStorage } from '../../adapters/storage/storage';
import { RunEntity } from '../../db/flow/run.entity';
import { AppError } from '../../domain/errors';
import { RUN_SHORT_ID_PREFIX } from '../../domain/flow/flow-ids';
import type { ListRunsQuery } from './runs.schema';
import { findByIdOrShortId } from '../../db/find-by-ref';

/** Runs of one workspace: a run of another workspace is answered like one that does not exist. */

export async function listRuns(db: DataSource, projectId: string, query: ListRunsQuery, gateId?: string): Promise<{ runs: RunEntity[]; total: number }> {
  const order = query.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const qb = db.getRepository(RunEntity).createQueryBuilder('r').where('r.projectId = :projectId', { projectId });
  if (gateId) qb.andWhere('r.gateId = :gateId', { gateId });
  if (query.status) qb.andWhere('r.status = :status', { status: query.status });
  if (query.source) qb.andWhere('r.source = :source', { source: query.source });
  if (query.from) qb.andWhere('r.createdAt >= :from', { from: query.from });
  if (query.to) qb.andWhere('r.createdAt < :to', { to: query.to });
  if (query.sortBy === 'status') qb.orderBy('r.status', order).addOrderBy('r.createdAt', 'DESC');
  else qb.orderBy('r.createdAt', order);
  qb.addOrderBy('r.id', order);
  const [runs, total] = await qb.offset((query.page - 1) * query.limit).limit(query.limit).getManyAndCount();
  return { runs, total };
}

/** A run by UUID or shortId (`frun_…`). */
export async function getRun(db: DataSource, projectId: string, ref: string): Promise<RunEntity> {
  const run = await findByIdOrShortId(db, RunEntity, projectId, ref, RUN_SHORT_ID_PREFIX, 64);
  if (!run) throw new AppError('FLOW.RUN_NOT_FOUND', undefined, { runId: ref });
  return run;
}

/** A signed link to the run's artefact; null before one is stored and once retention removed it (artefact_expired_at). */
export async function runArtefactUrl(deps: { storage: ArtefactStorage; downloadUrlTtlSeconds: number }, run: RunEntity): Promise<string | null> {
  if (!run.artefactKey || run.artefactExpiredAt) return null;
  return (await deps.storage.signedUrl(run.artefactKey, { ttlSeconds: deps.downloadUrlTtlSeconds })).url;
}

const ARTEFACT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The artefact's bytes: 404 ERR_FILE_001 before one is stored and once retention removed it. */
export async function readRunArtefact(
  deps: { storage: ArtefactStorage },
  run: RunEntity,
): Promise<{ body: Readable; contentType: string; size: number; extension: string }> {
  const extension = run.artefactKey?.slice(run.artefactKey.lastIndexOf('.') + 1) ?? '';
  if (!run.artefactKey || run.artefactExpiredAt) throw new AppError('ERR_FILE_001', 'This run has no document', { runId: run.id });
  const stored = await deps.storage.get(run.artefactKey);
  return { body: stored.body, contentType: ARTEFACT_TYPES[extension] ?? 'application/octet-stream', size: stored.size, extension };
}
