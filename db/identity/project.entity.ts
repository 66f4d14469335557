import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A project; the API calls it a team (`/api/teams`, `teamId`). */
@Entity({ name: 'projects' })
export class ProjectEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('boolean', { name: 'is_personal' }) isPersonal: boolean;
  @Column('uuid', { name: 'owner_id' }) ownerId: string;
  /** Plan name (free, starter, growth, scale): drives quotas and Flow limits. */
  @Column('text', { default: 'free' }) plan: string;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
