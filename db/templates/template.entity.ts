import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';

/** A template: its editable draft plus where publishing has got to (spec, Template). */
@Entity({ name: 'templates' })
export class TemplateEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `etpl_` + 12 base62 characters: short enough to paste into an automation platform. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Derived from the name at creation and kept on rename, so URLs built on it keep working. */
  @Column('text') slug: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'output_formats', array: true }) outputFormats: TemplateType[];
  @Column('text', { name: 'folder_id', nullable: true }) folderId: string | null;
  /** What PUT edits and preview renders; publishing copies it into a version. */
  @Column('jsonb') draft: TemplateDefinition;
  @Column('boolean', { name: 'is_published' }) isPublished: boolean;
  /** When the latest version was published. */
  @Column('timestamptz', { name: 'published_at', nullable: true }) publishedAt: Date | null;
  /** Number of the newest version; 0 until the first publish. */
  @Column('integer', { name: 'latest_version' }) latestVersion: number;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'deleted_at', nullable: true }) deletedAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
