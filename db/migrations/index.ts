import { Identity1732200000000 } from './1732200000000-identity';
import { Teams1732200001000 } from './1732200001000-teams';
import { Users1732200002000 } from './1732200002000-users';
import { Templates1732200003000 } from './1732200003000-templates';
import { Flow1732200004000 } from './1732200004000-flow';
import { Webhooks1732200005000 } from './1732200005000-webhooks';
import { Documents1732200006000 } from './1732200006000-documents';
import { FlowApprovals1732200007000 } from './1732200007000-flow-approvals';
import { FlowLifecycle1732200008000 } from './1732200008000-flow-lifecycle';
import { Sessions1732200009200 } from './1732200009200-sessions';
import { ApiKeyManageGates1732200009400 } from './1732200009400-api-key-manage-gates';
import { ReviewTokenProject1732200009410 } from './1732200009410-review-token-project';
import { ReportingDatasources1732200010000 } from './1732200010000-reporting-datasources';
import { ApiKeyReportingFlags1732200010050 } from './1732200010050-api-key-reporting-flags';
import { ReportingQueries1732200010100 } from './1732200010100-reporting-queries';
import { ReportingReports1732200010200 } from './1732200010200-reporting-reports';
import { ReportingRuns1732200010300 } from './1732200010300-reporting-runs';
import { ReportingQueryLimits1732200010400 } from './1732200010400-reporting-query-limits';
import { ReportingQueryRequest1732200010510 } from './1732200010510-reporting-query-request';
import { ReportingDistribution1732200010600 } from './1732200010600-reporting-distribution';
import { ReportingSchedules1732200010700 } from './1732200010700-reporting-schedules';
import { ReportingImports1732200010800 } from './1732200010800-reporting-imports';
import { ReportingAgents1732200010900 } from './1732200010900-reporting-agents';
import { ReportingAgentSignals1732200011000 } from './1732200011000-reporting-agent-signals';
import { IdempotencyKeys1732200011100 } from './1732200011100-idempotency-keys';
import { OAuthClients1732200011200 } from './1732200011200-oauth-clients';

/** In order. A migration, once on main, never changes: add a new one. */
export const MIGRATIONS = [Identity1732200000000, Teams1732200001000, Users1732200002000, Templates1732200003000, Flow1732200004000, Webhooks1732200005000, Documents1732200006000, FlowApprovals1732200007000, FlowLifecycle1732200008000, Sessions1732200009200, ApiKeyManageGates1732200009400, ReviewTokenProject1732200009410, ReportingDatasources1732200010000, ApiKeyReportingFlags1732200010050, ReportingQueries1732200010100, ReportingReports1732200010200, ReportingRuns1732200010300, ReportingQueryLimits1732200010400, ReportingQueryRequest1732200010510, ReportingDistribution1732200010600, ReportingSchedules1732200010700, ReportingImports1732200010800, ReportingAgents1732200010900, ReportingAgentSignals1732200011000, IdempotencyKeys1732200011100, OAuthClients1732200011200];
