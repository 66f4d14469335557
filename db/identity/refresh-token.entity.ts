import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One refresh token. Rotation replaces it with a new one of the same family; presenting a token
 * that was already rotated revokes the whole family (it was stolen or replayed).
 */
@Entity({ name: 'refresh_tokens' })
export class RefreshTokenEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'user_id' }) userId: string;
  @Column('uuid', { name: 'family_id' }) familyId: string;
  @Column('text', { name: 'token_hash' }) tokenHash: string;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
