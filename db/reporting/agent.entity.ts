import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The latest session an agent opened (POST /api/agents/me/sessions); a new one replaces it. */
export interface AgentSession {
  id: string;
  version: string;
  hostname: string;
  platform: string;
  startedAt: string;
  capabilities: string[];
  maxConcurrency: number;
}

/** What the latest heartbeat said; `unhealthyBeats` counts heartbeats in a row with a pool in trouble. */
export interface AgentLoad {
  running: number;
  capacity: number;
  queued: number;
  unhealthyBeats: number;
}

export interface AgentPool {
  datasourceId: string;
  kind: string | null;
  size: number;
  max: number;
  idle: number;
  waiting: number;
  lastError: string | null;
  lastErrorAt: string | null;
  reportedAt: string;
}

export interface AgentRecentError {
  at: string;
  taskId: string | null;
  code: string;
  message: string;
}

/** A reporting agent (docs/reporting.md "Agents"). Only the token's SHA-256 is kept. */
@Entity({ name: 'reporting_agents' })
export class AgentEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'project_id' }) projectId: string;
  /** `agt_` + 16 base62 characters. */
  @Column('text', { name: 'short_id' }) shortId: string;
  /** Unique per project, case-insensitive. */
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('boolean', { name: 'is_active' }) isActive: boolean;
  @Column('text', { name: 'token_hash' }) tokenHash: string;
  @Column('text', { name: 'token_prefix' }) tokenPrefix: string;
  /** PEM; set by the first session that sends one, fixed afterwards (an admin may clear it). */
  @Column('text', { name: 'public_key', nullable: true }) publicKey: string | null;
  /** When an admin confirmed `publicKey` by its fingerprint; until then nothing is sealed or leased to the agent. */
  @Column('timestamptz', { name: 'key_confirmed_at', nullable: true }) keyConfirmedAt: Date | null;
  @Column('uuid', { name: 'key_confirmed_by', nullable: true }) keyConfirmedBy: string | null;
  @Column('timestamptz', { name: 'last_seen_at', nullable: true }) lastSeenAt: Date | null;
  @Column('jsonb', { nullable: true }) session: AgentSession | null;
  @Column('jsonb', { nullable: true }) load: AgentLoad | null;
  @Column('jsonb') pools: AgentPool[];
  @Column('jsonb', { name: 'recent_errors' }) recentErrors: AgentRecentError[];
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
