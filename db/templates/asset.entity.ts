import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An image or font a project's templates use (docs/templates.md "Assets and fonts"). */
@Entity({ name: 'template_assets' })
export class TemplateAssetEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  @Column('text') kind: 'image' | 'font' | 'pdf';
  /** The uploaded file's name, or the name given with it. */
  @Column('text') name: string;
  /** Decided by the bytes (domain/templates/asset-content.ts), never by what the upload claimed. */
  @Column('text', { name: 'media_type' }) mediaType: string;
  @Column('integer', { name: 'size_bytes' }) sizeBytes: number;
  @Column('text') sha256: string;
  @Column('integer', { nullable: true }) width: number | null;
  @Column('integer', { nullable: true }) height: number | null;
  @Column('text', { name: 'font_family', nullable: true }) fontFamily: string | null;
  @Column('integer', { name: 'font_weight', nullable: true }) fontWeight: number | null;
  @Column('text', { name: 'font_style', nullable: true }) fontStyle: string | null;
  /** Not selected unless asked for: lists and lookups never carry the bytes. */
  @Column('bytea', { select: false }) content: Buffer;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
