import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EmailTokenPurpose } from '../../domain/identity/account.types';

/** Single-use emailed token (verification, password reset); only its hash is kept. */
@Entity({ name: 'email_tokens' })
export class EmailTokenEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'user_id' }) userId: string;
  @Column('text') purpose: EmailTokenPurpose;
  @Column('text', { name: 'token_hash' }) tokenHash: string;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'used_at', nullable: true }) usedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
