import { Badge, Button, Checkbox, Group, NumberInput, Paper, PasswordInput, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import type { Gate } from './model';
import type { ChannelRow, SettingsForm } from './settings';

const num = (v: string | number, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

function Section({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={label}>
      <Stack gap="sm">
        <Title order={3} size="h4">
          {label}
        </Title>
        {children}
      </Stack>
    </Paper>
  );
}

/**
 * What happens to a valid payload (docs/flow.md "Run lifecycle"): render, approval, delivery, and
 * the gate's limits and circuit breaker. Secrets are write-only: a stored one is never shown, only
 * replaced (or, for the render API's, removed).
 */
export function GateSettings({ form, onChange, readOnly, gate }: { form: SettingsForm; onChange: (next: SettingsForm) => void; readOnly: boolean; gate?: Gate }) {
  const { team } = useSession();
  const set = (patch: Partial<SettingsForm>) => onChange({ ...form, ...patch });
  const templates = useQuery({
    queryKey: ['templates', team?.id, 'for-gates'],
    queryFn: () => must(api.GET('/api/templates', { params: { query: { limit: 100 } } })),
    enabled: form.renderMode === 'native',
  });
  const setChannel = (i: number, patch: Partial<ChannelRow>) => set({ channels: form.channels.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  return (
    <Stack>
      <Section label="Render">
        <Select
          label="Render"
          description="Make a document of each valid payload"
          w={320}
          allowDeselect={false}
          readOnly={readOnly}
          data={[
            { value: 'none', label: 'No document' },
            { value: 'native', label: 'A Formwork template' },
            { value: 'custom_api', label: 'My own render API' },
          ]}
          value={form.renderMode}
          onChange={(v) => v && set({ renderMode: v as SettingsForm['renderMode'] })}
        />
        {form.renderMode === 'native' && (
          <Group align="flex-start">
            <Select
              label="Template"
              description="Its latest published version, with the payload as its variables"
              w={320}
              searchable
              readOnly={readOnly}
              nothingFoundMessage={templates.isFetching ? 'Loading…' : 'No template'}
              data={(templates.data?.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
              onDropdownOpen={() => void templates.refetch()}
              value={form.renderTemplateId}
              onChange={(v) => set({ renderTemplateId: v })}
            />
            <Select label="Format" w={140} allowDeselect={false} readOnly={readOnly} data={[{ value: 'pdf', label: 'PDF' }, { value: 'excel', label: 'Excel' }]} value={form.renderFormat} onChange={(v) => v && set({ renderFormat: v })} />
          </Group>
        )}
        {form.renderMode === 'custom_api' && (
          <Stack gap="xs">
            <TextInput label="Render API URL" description="The payload is POSTed here; it answers the document" type="url" w={420} readOnly={readOnly} value={form.renderUrl} onChange={(e) => set({ renderUrl: e.currentTarget.value })} />
            <PasswordInput
              label="Render API secret"
              description={form.renderSecretStored && !form.removeRenderSecret ? 'A secret is stored and never shown; type a new one to replace it' : 'Optional: signs each request (X-Service-Signature)'}
              placeholder={form.renderSecretStored && !form.removeRenderSecret ? 'Stored (write-only)' : undefined}
              w={420}
              readOnly={readOnly}
              autoComplete="new-password"
              value={form.renderSecret}
              onChange={(e) => set({ renderSecret: e.currentTarget.value })}
            />
            {form.renderSecretStored && !readOnly && <Checkbox label="Remove the stored secret" checked={form.removeRenderSecret} onChange={(e) => set({ removeRenderSecret: e.currentTarget.checked, renderSecret: '' })} />}
          </Stack>
        )}
      </Section>

      <Section label="Approval">
        <Select
          label="Approval"
          w={320}
          allowDeselect={false}
          readOnly={readOnly}
          data={[
            { value: 'auto', label: 'None: valid payloads go on' },
            { value: 'manual', label: 'People approve each run' },
          ]}
          value={form.approvalMode}
          onChange={(v) => v && set({ approvalMode: v as SettingsForm['approvalMode'] })}
        />
        {form.approvalMode === 'manual' && (
          <Stack gap="xs">
            <Text size="sm" c="dimmed">
              Each approver is e-mailed a link to decide; one rejection rejects.
            </Text>
            {form.approvers.map((a, i) => (
              <Group key={i} gap="xs" align="flex-end" role="group" aria-label={`Approver ${i + 1}`}>
                <TextInput label="E-mail" aria-label={`Approver ${i + 1} e-mail`} type="email" w={260} readOnly={readOnly} value={a.email} onChange={(e) => set({ approvers: form.approvers.map((x, j) => (j === i ? { ...x, email: e.currentTarget.value } : x)) })} />
                <TextInput label="Name" aria-label={`Approver ${i + 1} name`} w={200} readOnly={readOnly} value={a.name} onChange={(e) => set({ approvers: form.approvers.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)) })} />
                {!readOnly && (
                  <Button size="compact-sm" variant="subtle" color="red" aria-label={`Remove approver ${i + 1}`} onClick={() => set({ approvers: form.approvers.filter((_, j) => j !== i) })}>
                    Remove
                  </Button>
                )}
              </Group>
            ))}
            {!readOnly && (
              <Group>
                <Button size="xs" variant="light" onClick={() => set({ approvers: [...form.approvers, { email: '', name: '' }] })}>
                  Add an approver
                </Button>
              </Group>
            )}
            <Group align="flex-start">
              <NumberInput
                label="Approvals needed"
                description={`N of the ${form.approvers.length} approvers`}
                w={180}
                min={1}
                max={Math.max(1, form.approvers.length)}
                allowDecimal={false}
                readOnly={readOnly}
                value={form.requiredApprovals}
                onChange={(v) => set({ requiredApprovals: num(v, 1) })}
              />
              <NumberInput label="Timeout (minutes)" description="How long approvers have" w={180} min={1} max={43200} allowDecimal={false} readOnly={readOnly} value={form.timeoutMinutes} onChange={(v) => set({ timeoutMinutes: num(v, 1440) })} />
              <Select
                label="When the time is up"
                w={220}
                allowDeselect={false}
                readOnly={readOnly}
                data={[
                  { value: 'reject', label: 'Reject (the run expires)' },
                  { value: 'approve', label: 'Approve (and deliver)' },
                ]}
                value={form.onTimeout}
                onChange={(v) => v && set({ onTimeout: v as SettingsForm['onTimeout'] })}
              />
            </Group>
            <Group align="flex-start">
              <Select
                label="Tell the project's owners"
                w={260}
                allowDeselect={false}
                readOnly={readOnly}
                data={[
                  { value: 'digest', label: 'In a digest' },
                  { value: 'immediate', label: 'At once, per run' },
                ]}
                value={form.notificationMode}
                onChange={(v) => v && set({ notificationMode: v as SettingsForm['notificationMode'] })}
              />
              {form.notificationMode === 'digest' && (
                <NumberInput label="Digest every (minutes)" w={180} min={1} max={60} allowDecimal={false} readOnly={readOnly} value={form.notificationDigestMinutes} onChange={(v) => set({ notificationDigestMinutes: num(v, 5) })} />
              )}
            </Group>
          </Stack>
        )}
      </Section>

      <Section label="Delivery">
        <Text size="sm" c="dimmed">
          Each valid run (once rendered and approved, where the gate asks for that) is POSTed to every channel, signed with the channel&apos;s secret. Secrets and header values are write-only: once saved they are never shown.
        </Text>
        {form.channels.length === 0 && (
          <Text size="sm" c="dimmed">
            No delivery channels.
          </Text>
        )}
        {form.channels.map((c, i) => {
          const label = `Channel ${i + 1}`;
          const keepsSecret = !!c.storedUrl && c.url.trim() === c.storedUrl;
          return (
            <Paper key={i} withBorder p="sm" role="group" aria-label={label}>
              <Stack gap="xs">
                <Group align="flex-start" gap="xs">
                  <TextInput label="Webhook URL" aria-label={`${label} URL`} type="url" w={380} readOnly={readOnly} value={c.url} onChange={(e) => setChannel(i, { url: e.currentTarget.value })} />
                  <PasswordInput
                    label="Signing secret"
                    aria-label={`${label} secret`}
                    description={keepsSecret ? 'Stored; type a new one to replace it' : 'At least 8 characters'}
                    placeholder={keepsSecret ? 'Stored (write-only)' : undefined}
                    w={260}
                    autoComplete="new-password"
                    readOnly={readOnly}
                    value={c.secret}
                    onChange={(e) => setChannel(i, { secret: e.currentTarget.value })}
                  />
                  {!readOnly && (
                    <Button mt={26} size="compact-sm" variant="subtle" color="red" aria-label={`Remove ${label}`} onClick={() => set({ channels: form.channels.filter((_, j) => j !== i) })}>
                      Remove
                    </Button>
                  )}
                </Group>
                {c.headers.map((h, k) => (
                  <Group key={k} gap="xs" align="flex-end">
                    <TextInput label="Header" aria-label={`${label} header ${k + 1} name`} w={200} readOnly={readOnly} value={h.name} onChange={(e) => setChannel(i, { headers: c.headers.map((x, m) => (m === k ? { ...x, name: e.currentTarget.value } : x)) })} />
                    <PasswordInput
                      label="Value"
                      aria-label={`${label} header ${k + 1} value`}
                      placeholder={h.stored ? 'Stored (write-only)' : undefined}
                      w={260}
                      autoComplete="off"
                      readOnly={readOnly}
                      value={h.value}
                      onChange={(e) => setChannel(i, { headers: c.headers.map((x, m) => (m === k ? { ...x, value: e.currentTarget.value } : x)) })}
                    />
                    {!readOnly && (
                      <Button size="compact-sm" variant="subtle" color="red" aria-label={`Remove ${label} header ${k + 1}`} onClick={() => setChannel(i, { headers: c.headers.filter((_, m) => m !== k) })}>
                        Remove
                      </Button>
                    )}
                  </Group>
                ))}
                {!readOnly && (
                  <Group>
                    <Button size="compact-xs" variant="subtle" aria-label={`Add a header to ${label}`} onClick={() => setChannel(i, { headers: [...c.headers, { name: '', value: '', stored: false }] })}>
                      Add a header
                    </Button>
                  </Group>
                )}
              </Stack>
            </Paper>
          );
        })}
        {!readOnly && form.channels.length < 10 && (
          <Group>
            <Button size="xs" variant="light" onClick={() => set({ channels: [...form.channels, { url: '', secret: '', headers: [] }] })}>
              Add a channel
            </Button>
          </Group>
        )}
      </Section>

      <Section label="Limits and circuit breaker">
        <NumberInput
          label="Submissions per minute"
          description="Empty: no limit of its own (1 to 1000)"
          w={260}
          min={1}
          max={1000}
          allowDecimal={false}
          readOnly={readOnly}
          value={form.maxSubmissionsPerMinute}
          onChange={(v) => set({ maxSubmissionsPerMinute: typeof v === 'number' ? v : '' })}
        />
        <Checkbox
          label="Circuit breaker"
          description="After repeated render or delivery failures, refuse submissions for a while"
          checked={form.circuitBreakerEnabled}
          disabled={readOnly}
          onChange={(e) => set({ circuitBreakerEnabled: e.currentTarget.checked })}
        />
        {form.circuitBreakerEnabled && (
          <Group align="flex-start">
            <NumberInput label="Failures before it opens" w={200} min={1} max={1000} allowDecimal={false} readOnly={readOnly} value={form.maxFailures} onChange={(v) => set({ maxFailures: num(v, 5) })} />
            <NumberInput label="Cooldown (seconds)" description="At least 60" w={200} min={60} max={604800} allowDecimal={false} readOnly={readOnly} value={form.cooldownSeconds} onChange={(v) => set({ cooldownSeconds: num(v, 300) })} />
          </Group>
        )}
        {gate && (
          <Group gap="xs">
            <Text size="sm">Circuit now:</Text>
            <Badge variant="light" color={gate.circuit.state === 'closed' ? 'green' : gate.circuit.state === 'open' ? 'red' : 'yellow'}>
              {gate.circuit.state.replace('_', '-')}
            </Badge>
            <Text size="sm" c="dimmed">
              {gate.circuit.consecutiveFailures} failures in a row{gate.circuit.openUntil ? `, open until ${new Date(gate.circuit.openUntil).toLocaleString()}` : ''}
            </Text>
          </Group>
        )}
      </Section>
    </Stack>
  );
}
