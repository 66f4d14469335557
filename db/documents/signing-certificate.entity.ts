import { Column, Entity, PrimaryColumn } from 'typeorm';
import { sealedText } from '../secret-columns';

/**
 * A project's signing certificate (docs/documents.md "Signatures"): a PKCS#12 file and its
 * password, both sealed at rest and never in an answer. Not selected unless asked for: lists and
 * lookups carry only what the certificate says of itself.
 */
@Entity({ name: 'signing_certificates' })
export class SigningCertificateEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('text') name: string;
  /** RFC 4514-style distinguished names of the signer's certificate and its issuer. */
  @Column('text') subject: string;
  @Column('text') issuer: string;
  /** Hexadecimal, as the certificate has it. */
  @Column('text', { name: 'serial_number' }) serialNumber: string;
  @Column('timestamptz', { name: 'not_before' }) notBefore: Date;
  @Column('timestamptz', { name: 'not_after' }) notAfter: Date;
  /** SHA-256 of the certificate's DER, hexadecimal. */
  @Column('text', { name: 'fingerprint_sha256' }) fingerprintSha256: string;
  /** The PKCS#12 file, base64; sealed at rest. */
  @Column('text', { transformer: sealedText, select: false }) p12: string;
  /** Sealed at rest; write-only. */
  @Column('text', { transformer: sealedText, select: false }) password: string;
  /** An RFC 3161 timestamp authority: signatures are then PAdES B-T. */
  @Column('text', { name: 'timestamp_url', nullable: true }) timestampUrl: string | null;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
