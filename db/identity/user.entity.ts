import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EmailPreferences } from '../../domain/identity/account.types';
import { sealedText } from '../secret-columns';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryColumn('uuid') id: string;
  /** Stored lower-cased; unique. */
  @Column('text') email: string;
  @Column('text') name: string;
  /** scrypt hash in PHC-like form (see domain/identity/passwords.ts). */
  @Column('text', { name: 'password_hash' }) passwordHash: string;
  @Column('timestamptz', { name: 'email_verified_at', nullable: true }) emailVerifiedAt: Date | null;
  @Column('text', { nullable: true }) timezone: string | null;
  @Column('jsonb', { name: 'email_preferences' }) emailPreferences: EmailPreferences;
  @Column('text', { name: 'avatar_key', nullable: true }) avatarKey: string | null;
  @Column('boolean', { name: 'two_factor_enabled', default: false }) twoFactorEnabled: boolean;
  /** TOTP seed (base32). It must be readable to check codes, so it cannot be hashed: encrypted at rest (db/secret-columns.ts). */
  @Column('text', { name: 'two_factor_secret', nullable: true, transformer: sealedText }) twoFactorSecret: string | null;
  /** Last TOTP time step accepted, so a code cannot be replayed within its validity window. */
  @Column('bigint', { name: 'two_factor_last_step', nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  twoFactorLastStep: number | null;
  /** Set when deletion was requested; the account is restorable until the purge starts. */
  @Column('timestamptz', { name: 'deletion_requested_at', nullable: true }) deletionRequestedAt: Date | null;
  @Column('text', { name: 'deletion_status', nullable: true }) deletionStatus: 'pending' | 'purging' | null;
  /** Optional answers to "why are you leaving?", kept only until the purge. */
  @Column('text', { name: 'deletion_reason', nullable: true }) deletionReason: string | null;
  @Column('text', { name: 'deletion_reason_text', nullable: true }) deletionReasonText: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
