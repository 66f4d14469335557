import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One single-use two-factor backup code; only its hash is kept. */
@Entity({ name: 'backup_codes' })
export class BackupCodeEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'user_id' }) userId: string;
  @Column('text', { name: 'code_hash' }) codeHash: string;
  @Column('timestamptz', { name: 'used_at', nullable: true }) usedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
