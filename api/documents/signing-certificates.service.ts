import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DataSource } from 'typeorm';
import type { OutboundGuard } from '../../adapters/http/outbound';
import { P12_MAX_BYTES } from '../../adapters/rendering/pdf-tools/p12';
import { describeP12InChild } from '../../adapters/rendering/pdf-tools/p12-child';
import { SigningCertificateEntity } from '../../db/documents/signing-certificate.entity';
import { assertSigningCertificate } from '../../db/documents/signing-certificates';
import type { OutputOptions } from '../../domain/documents/output';
import { AppError } from '../../domain/errors';
import type { UploadCertificateFields } from './signing-certificates.schema';
import { isUuid } from '../../domain/ids';

/**
 * A project's signing certificates (docs/documents.md "Signatures"): a PKCS#12 file and its
 * password, read once when uploaded (in a child process: describeP12InChild) and stored sealed;
 * answers carry what the certificate says of itself, never the file, the key or the password.
 */

export interface SigningCertificateDeps {
  db: DataSource;
  guard: OutboundGuard;
}

/** Most certificates one project holds. */
const CERTIFICATES_PER_PROJECT = 20;

export interface UploadedFile {
  filepath: string;
  size: number;
}

export function presentCertificate(c: SigningCertificateEntity) {
  return {
    id: c.id,
    name: c.name,
    subject: c.subject,
    issuer: c.issuer,
    serialNumber: c.serialNumber,
    notBefore: c.notBefore.toISOString(),
    notAfter: c.notAfter.toISOString(),
    fingerprintSha256: c.fingerprintSha256,
    timestampUrl: c.timestampUrl,
    createdAt: c.createdAt.toISOString(),
  };
}

/** The multipart part `file`, read (the parser has capped it at P12_MAX_BYTES while it streamed). */
export async function uploadedP12(file: UploadedFile | undefined): Promise<Buffer> {
  if (!file) throw new AppError('ERR_VALID_001', 'Send the PKCS#12 file as the multipart part `file`', { field: 'file' });
  if (file.size > P12_MAX_BYTES) throw new AppError('ERR_REQ_002', `A PKCS#12 file is at most ${P12_MAX_BYTES} bytes`, { limit: P12_MAX_BYTES });
  return readFile(file.filepath);
}

const commonName = (subject: string) => /(?:^|, )CN=([^,]+)/.exec(subject)?.[1];

export async function createCertificate(deps: SigningCertificateDeps, actor: { projectId: string; userId?: string }, p12: Buffer, input: UploadCertificateFields): Promise<SigningCertificateEntity> {
  if (!p12.length) throw new AppError('ERR_SIGN_002', 'The PKCS#12 file is empty', { reason: 'malformed' });
  // The authority is checked now (and again at each signature, from the PDF tools): an address the guard refuses is 400 ERR_OUTBOUND_001.
  if (input.timestampUrl) await deps.guard.assertAllowed(input.timestampUrl);
  const info = await describeP12InChild(p12, input.password);
  return deps.db.transaction(async (m) => {
    await m.query(`SELECT 1 FROM projects WHERE id = $1 FOR UPDATE`, [actor.projectId]);
    const count = await m.count(SigningCertificateEntity, { where: { projectId: actor.projectId } });
    if (count >= CERTIFICATES_PER_PROJECT) {
      throw new AppError('ERR_VALID_001', `A project holds at most ${CERTIFICATES_PER_PROJECT} signing certificates: delete one first`, { field: 'file', limit: CERTIFICATES_PER_PROJECT });
    }
    const row = m.create(SigningCertificateEntity, {
      id: randomUUID(),
      projectId: actor.projectId,
      name: input.name ?? commonName(info.subject) ?? info.subject.slice(0, 200),
      subject: info.subject,
      issuer: info.issuer,
      serialNumber: info.serialNumber,
      notBefore: new Date(info.notBefore),
      notAfter: new Date(info.notAfter),
      fingerprintSha256: info.fingerprintSha256,
      p12: p12.toString('base64'),
      password: input.password,
      timestampUrl: input.timestampUrl ?? null,
      createdBy: actor.userId ?? null,
      createdAt: new Date(),
    });
    await m.insert(SigningCertificateEntity, row);
    return row;
  });
}

export async function listCertificates(deps: SigningCertificateDeps, projectId: string): Promise<SigningCertificateEntity[]> {
  return deps.db.getRepository(SigningCertificateEntity).find({ where: { projectId }, order: { createdAt: 'DESC', id: 'ASC' } });
}

export async function getCertificate(deps: SigningCertificateDeps, projectId: string, id: string): Promise<SigningCertificateEntity> {
  const row = isUuid(id) ? await deps.db.getRepository(SigningCertificateEntity).findOne({ where: { id, projectId } }) : null;
  if (!row) throw new AppError('ERR_SIGN_001', undefined, { certificateId: id });
  return row;
}

export async function deleteCertificate(deps: SigningCertificateDeps, projectId: string, id: string): Promise<void> {
  const { affected } = isUuid(id) ? await deps.db.getRepository(SigningCertificateEntity).delete({ id, projectId }) : { affected: 0 };
  if (!affected) throw new AppError('ERR_SIGN_001', undefined, { certificateId: id });
}

/**
 * A generation asking for a signature names a certificate of its project, or is refused at once
 * (404 ERR_SIGN_001) instead of failing later in the render.
 */
export async function checkSignatureCertificate(db: DataSource, projectId: string, output: OutputOptions | undefined): Promise<void> {
  if (output?.signature) await assertSigningCertificate(db, projectId, output.signature.certificateId);
}
