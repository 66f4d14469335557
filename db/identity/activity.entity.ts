import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One entry of a project's activity feed (GET /api/teams/activity). */
@Entity({ name: 'activities' })
export class ActivityEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** Who did it; null once that user's account has been purged. */
  @Column('uuid', { name: 'user_id', nullable: true }) userId: string | null;
  @Column('text') type: string;
  /** Event-specific fields, merged into the presented entry (e.g. `template: {id, name}`). */
  @Column('jsonb') data: Record<string, unknown>;
  @Column('timestamptz', { name: 'created_at', default: () => 'clock_timestamp()' }) createdAt: Date;
}
