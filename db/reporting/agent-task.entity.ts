import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AgentTaskStatus } from '../../domain/reporting/agent-task-status';

export type AgentTaskKind = 'query' | 'test' | 'schema' | 'preview';
export type { AgentTaskStatus };

/**
 * One unit of agent work (docs/reporting.md "Agents", "Report runs through an agent"). `payload` holds the
 * compiled statement and limits (never secrets in clear); a query's rows go to storage
 * (`resultKey`), a test's or schema's small JSON answer to `result`.
 */
@Entity({ name: 'reporting_agent_tasks' })
export class AgentTaskEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `atk_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  @Column('uuid', { name: 'agent_id' }) agentId: string;
  @Column('text') kind: AgentTaskKind;
  @Column('uuid', { name: 'datasource_id' }) datasourceId: string;
  @Column('uuid', { name: 'run_id', nullable: true }) runId: string | null;
  @Column('text', { name: 'workflow_id', nullable: true }) workflowId: string | null;
  @Column('text', { name: 'activity_id', nullable: true }) activityId: string | null;
  @Column('integer') attempt: number;
  @Column('jsonb') payload: Record<string, unknown>;
  @Column('text') status: AgentTaskStatus;
  @Column('uuid', { name: 'session_id', nullable: true }) sessionId: string | null;
  @Column('timestamptz', { name: 'leased_at', nullable: true }) leasedAt: Date | null;
  @Column('timestamptz', { name: 'lease_expires_at', nullable: true }) leaseExpiresAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('jsonb', { nullable: true }) result: Record<string, unknown> | null;
  @Column('text', { name: 'result_key', nullable: true }) resultKey: string | null;
  @Column('jsonb', { nullable: true }) error: Record<string, unknown> | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
