import { ApiKeyEntity } from './identity/api-key.entity';
import { EmailTokenEntity } from './identity/email-token.entity';
import { MembershipEntity } from './identity/membership.entity';
import { ProjectEntity } from './identity/project.entity';
import { RefreshTokenEntity } from './identity/refresh-token.entity';
import { UserEntity } from './identity/user.entity';

/** Every entity, registered with the data source. */
export const ENTITIES = [UserEntity, ProjectEntity, MembershipEntity, ApiKeyEntity, RefreshTokenEntity, EmailTokenEntity];
