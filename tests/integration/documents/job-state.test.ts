import { randomUUID } from 'node:crypto';
import { completeBatch, insertBatch } from '../../../db/documents/batch-state';
import { creditBalance } from '../../../db/documents/billing';
import { DocumentBatchEntity } from '../../../db/documents/document-batch.entity';
import { cancelOpenJob, claimJob, finishJob, insertJobs } from '../../../db/documents/job-state';
import { jobIn, openStateDb, rowOf, type StateDb } from '../../support/state-rows';

/** db/documents/job-state.ts and batch-state.ts, the only writers of their status columns, against Postgres. */
describe('Document job and batch state owners', () => {
  let s: StateDb;
  beforeAll(async () => {
    s = await openStateDb();
  });
  afterAll(() => s.close());

  it('claims a queued job, claims it again while processing (a retried render), never once it ended', async () => {
    const job = await jobIn(s, 'queued');
    expect(await claimJob(s.db, job.id)).toBe(true);
    expect(await claimJob(s.db, job.id)).toBe(true);
    expect(await rowOf(s.db, 'document_jobs', job.id)).toMatchObject({ status: 'processing', attempts: 2 });
    await finishJob(s.db, job, { artefactKey: 'k', size: 3, generationMs: 5 });
    const done = await rowOf(s.db, 'document_jobs', job.id);
    expect(done).toMatchObject({ status: 'completed', artefact_key: 'k' });
    expect(await claimJob(s.db, job.id)).toBe(false);
    expect(await rowOf(s.db, 'document_jobs', job.id)).toEqual(done);
  });

  it.each(['completed', 'failed', 'cancelled'] as const)('leaves a %s job as it was: no finish, no cancel, no refund', async (status) => {
    const job = await jobIn(s, status);
    const before = await rowOf(s.db, 'document_jobs', job.id);
    const balance = await creditBalance(s.db, s.projectId);
    const outcome = await finishJob(s.db, job, { artefactKey: 'late', size: 1, generationMs: 1 });
    expect(outcome.status).toBe(status);
    await finishJob(s.db, job, { error: { code: 'ERR_INTERNAL_001', message: 'late failure' } });
    expect(await cancelOpenJob(s.db, job)).toBe(false);
    expect(await rowOf(s.db, 'document_jobs', job.id)).toEqual(before);
    expect(await creditBalance(s.db, s.projectId)).toBe(balance);
  });

  it('does not complete a job no render claimed; cancelling it refunds its credit', async () => {
    const job = await jobIn(s, 'queued');
    const before = await rowOf(s.db, 'document_jobs', job.id);
    const balance = await creditBalance(s.db, s.projectId);
    await finishJob(s.db, job, { artefactKey: 'k', size: 3, generationMs: 5 });
    expect(await rowOf(s.db, 'document_jobs', job.id)).toEqual(before);
    expect(await cancelOpenJob(s.db, job)).toBe(true);
    expect(await rowOf(s.db, 'document_jobs', job.id)).toMatchObject({ status: 'cancelled' });
    expect(await creditBalance(s.db, s.projectId)).toBe(balance + 1);
  });

  it('creates jobs only queued', async () => {
    const job = await jobIn(s, 'queued');
    const copy = { ...job, id: randomUUID(), status: 'processing' as const };
    await expect(s.db.transaction((m) => insertJobs(m, [copy]))).rejects.toThrow('a job is not created processing');
    expect(await rowOf(s.db, 'document_jobs', copy.id)).toBeUndefined();
  });

  it('completes a batch once; the second completion changes nothing', async () => {
    const batch = Object.assign(new DocumentBatchEntity(), {
      id: randomUUID(), projectId: s.projectId, templateId: randomUUID(), format: 'pdf' as const, status: 'processing' as const,
      totalJobs: 1, metadata: null, apiKeyId: null, createdAt: new Date(), completedAt: null,
    });
    await s.db.transaction((m) => insertBatch(m, batch));
    expect(await completeBatch(s.db, batch.id)).toBe(true);
    const done = await rowOf(s.db, 'document_batches', batch.id);
    expect(done.status).toBe('completed');
    expect(await completeBatch(s.db, batch.id)).toBe(false);
    expect(await rowOf(s.db, 'document_batches', batch.id)).toEqual(done);
    await expect(s.db.transaction((m) => insertBatch(m, { ...batch, id: randomUUID(), status: 'completed' }))).rejects.toThrow('a batch is not created completed');
  });
});
