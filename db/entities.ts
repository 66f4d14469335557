import { GateEntity } from './flow/gate.entity';
import { GateSchemaVersionEntity } from './flow/gate-schema-version.entity';
import { RunEntity } from './flow/run.entity';
import { ApprovalEntity } from './flow/approval.entity';
import { ReviewTokenEntity } from './flow/review-token.entity';
import { ActivityEntity } from './identity/activity.entity';
import { ApiKeyEntity } from './identity/api-key.entity';
import { BackupCodeEntity } from './identity/backup-code.entity';
import { EmailTokenEntity } from './identity/email-token.entity';
import { InvitationEntity } from './identity/invitation.entity';
import { MembershipEntity } from './identity/membership.entity';
import { ProjectEntity } from './identity/project.entity';
import { RefreshTokenEntity } from './identity/refresh-token.entity';
import { UserEntity } from './identity/user.entity';
import { WebhookDeliveryEntity } from './webhooks/webhook-delivery.entity';
import { WebhookSubscriptionEntity } from './webhooks/webhook-subscription.entity';
import { TemplateEntity } from './templates/template.entity';
import { TemplateVersionEntity } from './templates/template-version.entity';
import { DocumentBatchEntity } from './documents/document-batch.entity';
import { DocumentJobEntity } from './documents/document-job.entity';
import { DatasourceEntity } from './reporting/datasource.entity';
import { QueryEntity } from './reporting/query.entity';
import { QueryVersionEntity } from './reporting/query-version.entity';
import { ReportEntity } from './reporting/report.entity';
import { ReportVersionEntity } from './reporting/report-version.entity';

/** Every entity, registered with the data source. */
export const ENTITIES = [UserEntity, ProjectEntity, MembershipEntity, ApiKeyEntity, RefreshTokenEntity, EmailTokenEntity, InvitationEntity, ActivityEntity, BackupCodeEntity, TemplateEntity, TemplateVersionEntity, GateEntity, GateSchemaVersionEntity, RunEntity, WebhookSubscriptionEntity, WebhookDeliveryEntity, DocumentJobEntity, DocumentBatchEntity, ApprovalEntity, ReviewTokenEntity, DatasourceEntity, QueryEntity, QueryVersionEntity, ReportEntity, ReportVersionEntity];
