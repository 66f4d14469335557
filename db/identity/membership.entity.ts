import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '../../domain/identity/roles';

@Entity({ name: 'memberships' })
export class MembershipEntity {
  @PrimaryColumn('uuid', { name: 'project_id' }) projectId: string;
  @PrimaryColumn('uuid', { name: 'user_id' }) userId: string;
  @Column('text') role: Role;
  @Column('timestamptz', { name: 'joined_at' }) joinedAt: Date;
}
