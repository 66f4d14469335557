import type { DataSource } from 'typeorm';
import { requireProject, type Scope } from '../middleware/guards';
import type { Actor } from './template-store.service';

/**
 * Who may do what with templates (spec: "JWT; API key is accepted for read operations";
 * contract §2: viewer reads, member creates and uses templates). Reads, renders and checks
 * (GET endpoints, export, preview, validate-*) take a viewer or an API key with `read_templates`;
 * anything that changes a stored template takes a member and refuses API keys (403 ERR_AUTH_005).
 */
export function templateGuards(db: DataSource) {
  return {
    read: requireProject(db, { role: 'viewer', permission: 'read_templates' }),
    write: requireProject(db, { role: 'member' }),
  };
}

export function actorOf(scope: Scope): Actor {
  return { projectId: scope.projectId, userId: scope.userId };
}
