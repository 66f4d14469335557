import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SchemaVersionSource } from '../../domain/flow/gate-settings';
import type { BusinessRule, FreetextConfig, ObjectSchema, ValidationMode } from '../../domain/flow/gate.types';

/** An immutable snapshot of what a gate validates with; runs record the version they used. */
@Entity({ name: 'flow_gate_schema_versions' })
export class GateSchemaVersionEntity {
  @PrimaryColumn('uuid', { name: 'gate_id' }) gateId: string;
  @PrimaryColumn('integer') version: number;
  @Column('text', { name: 'validation_mode' }) validationMode: ValidationMode;
  @Column('jsonb', { nullable: true }) schema: ObjectSchema | null;
  @Column('jsonb', { name: 'business_rules' }) businessRules: BusinessRule[];
  @Column('jsonb', { name: 'freetext_config', nullable: true }) freetextConfig: FreetextConfig | null;
  @Column('text') source: SchemaVersionSource;
  @Column('uuid', { name: 'source_template_id', nullable: true }) sourceTemplateId: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
