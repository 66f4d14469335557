import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { TemplateDefinition, TemplateType } from '../../domain/templates/template.types';

/** A published, immutable snapshot of a template's draft; generation renders these. */
@Entity({ name: 'template_versions' })
export class TemplateVersionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'template_id' }) templateId: string;
  /** 1, 2, 3… per template; a restore also takes the next number. */
  @Column('integer') version: number;
  @Column('jsonb') definition: TemplateDefinition;
  /** Name, description and formats as they were at publication ("template state at that version"). */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'output_formats', array: true }) outputFormats: TemplateType[];
  @Column('text', { name: 'release_notes', nullable: true }) releaseNotes: string | null;
  @Column('timestamptz', { name: 'published_at' }) publishedAt: Date;
  @Column('uuid', { name: 'published_by', nullable: true }) publishedBy: string | null;
}
