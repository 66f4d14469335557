import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An external approver's review session (`fmrv_…` Bearer token), bound to one e-mail; only its hash is kept. */
@Entity({ name: 'flow_review_tokens' })
export class ReviewTokenEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('text') email: string;
  @Column('text', { name: 'token_hash' }) tokenHash: string;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  /** Set when the e-mail has no pending approval left (tokens die with the decision). */
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
}
