import { Badge, Checkbox, Group, Stack, Text } from '@mantine/core';
import type { components, paths } from '@formwork/client';

/** The permission flags the API knows for API keys and OAuth clients (docs/identity.md, docs/oauth.md). */
export type Permissions = Required<NonNullable<paths['/api/api-keys']['post']['requestBody']['content']['application/json']['permissions']>>;
export type Permission = keyof Permissions;
type InactiveReason = components['schemas']['ApiKey']['inactiveReason'];

/**
 * Each flag with what it allows. Typed by the API's own list: a flag the API gains and this list
 * lacks fails the build.
 */
const PERMISSIONS: Record<Permission, { label: string; description: string }> = {
  generate_documents: { label: 'Generate documents', description: 'Start documents and batches from published templates' },
  read_documents: { label: 'Read documents', description: 'Jobs, batches and their downloads' },
  read_templates: { label: 'Read templates', description: 'Templates and their versions' },
  manage_webhooks: { label: 'Manage webhooks', description: 'Create, change and delete webhook subscriptions' },
  manage_gates: { label: 'Configure Flow gates', description: 'Gate settings, which hold delivery URLs and render endpoints' },
  read_runs: { label: 'Read Flow runs', description: 'Run payloads: the submitters’ data' },
  read_reports: { label: 'Read reports', description: 'Reports, their runs and outputs' },
  run_reports: { label: 'Run reports', description: 'Start report runs, which query business databases' },
  embed_designer: { label: 'Embed the designer', description: 'Mint short-lived tokens that open one template’s designer in your own site' },
};

const FLAGS = Object.keys(PERMISSIONS) as Permission[];

/** What the API gives a key created without `permissions`: the three everyday flags. */
export const DEFAULT_PERMISSIONS: Permissions = Object.fromEntries(FLAGS.map((p) => [p, p === 'generate_documents' || p === 'read_documents' || p === 'read_templates'])) as Permissions;

/** Every flag as a boolean, from an answer's open `permissions` object. */
export function allFlags(given: Record<string, boolean> | undefined): Permissions {
  return Object.fromEntries(FLAGS.map((p) => [p, given?.[p] === true])) as Permissions;
}

/** A checkbox per flag, in a group named `label`. */
export function PermissionChecks({ label, value, onChange, disabled }: { label: string; value: Permissions; onChange: (next: Permissions) => void; disabled?: boolean }) {
  return (
    <Checkbox.Group label={label} value={FLAGS.filter((p) => value[p])} onChange={(on) => onChange(Object.fromEntries(FLAGS.map((p) => [p, on.includes(p)])) as Permissions)}>
      <Stack gap={6} mt={6}>
        {FLAGS.map((p) => (
          <Checkbox key={p} value={p} label={PERMISSIONS[p].label} description={PERMISSIONS[p].description} disabled={disabled} />
        ))}
      </Stack>
    </Checkbox.Group>
  );
}

/** The flags that are on, as small badges (or "none"). */
export function PermissionBadges({ value }: { value: Record<string, boolean> }) {
  const on = FLAGS.filter((p) => value[p]);
  if (on.length === 0) return <Text size="sm" c="dimmed">none</Text>;
  return (
    <Group gap={4}>
      {on.map((p) => (
        <Badge key={p} size="sm" variant="light" tt="none" flex="none" miw="max-content">
          {PERMISSIONS[p].label}
        </Badge>
      ))}
    </Group>
  );
}

/** What a person reads for the API's `inactiveReason` (null: the key works). */
const STATES: Record<NonNullable<InactiveReason>, { label: string; color: string }> = {
  revoked: { label: 'revoked', color: 'gray' },
  expired: { label: 'expired', color: 'orange' },
  creator_pending_deletion: { label: 'creator’s account is being deleted', color: 'orange' },
  creator_left_project: { label: 'creator left the project', color: 'orange' },
};

export function StateBadge({ reason }: { reason: InactiveReason }) {
  if (!reason) return <Badge color="green" flex="none" miw="max-content">active</Badge>;
  return (
    <Badge color={STATES[reason].color} tt="none" flex="none" miw="max-content">
      {STATES[reason].label}
    </Badge>
  );
}
