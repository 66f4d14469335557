import type { DataSource } from 'typeorm';
import { AppError } from '../../domain/errors';
import { SigningCertificateEntity } from './signing-certificate.entity';
import { isUuid } from '../../domain/ids';

/** A signing certificate opened for one signature: what the PDF tools need (adapters/rendering/pdf-tools/sign.ts). */
export interface StoredSigningMaterial {
  p12: Buffer;
  password: string;
  timestampUrl?: string;
}

const notFound = (certificateId: string) => new AppError('ERR_SIGN_001', undefined, { certificateId });

/**
 * The project's signing certificate `certificateId`, unsealed, for a render (RenderDeps.signing):
 * one of another project, a deleted one or an unknown id is 404 ERR_SIGN_001 alike, and the job fails with it.
 */
export async function openSigningCertificate(db: DataSource, projectId: string, certificateId: string): Promise<StoredSigningMaterial> {
  const row = isUuid(certificateId)
    ? await db
        .getRepository(SigningCertificateEntity)
        .createQueryBuilder('c')
        .addSelect(['c.p12', 'c.password'])
        .where('c.id = :certificateId AND c.project_id = :projectId', { certificateId, projectId })
        .getOne()
    : null;
  if (!row) throw notFound(certificateId);
  return { p12: Buffer.from(row.p12, 'base64'), password: row.password, ...(row.timestampUrl ? { timestampUrl: row.timestampUrl } : {}) };
}

/** Whether the project holds `certificateId` (the acceptance check of a generation asking for a signature). */
export async function assertSigningCertificate(db: DataSource, projectId: string, certificateId: string): Promise<void> {
  const found = isUuid(certificateId) && (await db.getRepository(SigningCertificateEntity).exists({ where: { id: certificateId, projectId } }));
  if (!found) throw notFound(certificateId);
}
