import { Alert, Badge, Button, Group, Modal, NumberInput, PasswordInput, Select, Stack, Switch, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../../api';
import { JsonField } from '../../../JsonField';
import { useSession } from '../../../session';
import { ConfirmButton, ShownOnce, when } from '../../controls';
import { call, ProblemAlert } from './problems';
import { useCanWrite, type Channel } from './shared';

type Kind = Channel['kind'];

interface Field {
  key: string;
  label: string;
  type?: 'text' | 'textarea' | 'list' | 'number' | 'select' | 'headers';
  options?: string[];
  required?: boolean;
  description?: string;
}

/** What each kind is configured with (docs/reporting.md "Channels"); secrets are write-only. */
const KINDS: Record<Kind, { label: string; config: Field[]; secrets: Field[] }> = {
  email: {
    label: 'E-mail',
    config: [
      { key: 'to', label: 'To', type: 'list', required: true, description: 'Addresses, separated by commas; each gets a message of its own' },
      { key: 'cc', label: 'Cc', type: 'list' },
      { key: 'subject', label: 'Subject', description: 'Default: {{report.name}} — {{run.scheduledFor | date}}' },
      { key: 'body', label: 'Message', type: 'textarea', description: 'Placeholders: {{report.name}}, {{run.shortId}}, {{run.status}}, {{links}}' },
      { key: 'attach', label: 'Files', type: 'select', options: ['files', 'links'], description: 'Attached, or as signed links' },
    ],
    secrets: [],
  },
  slack: { label: 'Slack', config: [{ key: 'text', label: 'Message', type: 'textarea' }], secrets: [{ key: 'webhookUrl', label: 'Incoming webhook URL', required: true }] },
  teams: {
    label: 'Microsoft Teams',
    config: [
      { key: 'title', label: 'Title' },
      { key: 'text', label: 'Message', type: 'textarea' },
    ],
    secrets: [{ key: 'webhookUrl', label: 'Workflows webhook URL', required: true }],
  },
  webhook: {
    label: 'Webhook',
    config: [
      { key: 'url', label: 'URL', required: true, description: 'Receives a signed POST per run (docs: report.run.completed)' },
      { key: 'headers', label: 'Headers', type: 'headers', description: 'One "Name: value" a line; values are write-only (a name with no value keeps the stored one)' },
    ],
    secrets: [],
  },
  s3: {
    label: 'S3 bucket',
    config: [
      { key: 'bucket', label: 'Bucket', required: true },
      { key: 'prefix', label: 'Prefix' },
      { key: 'region', label: 'Region', required: true },
      { key: 'endpoint', label: 'Endpoint', description: 'For S3-compatible servers' },
    ],
    secrets: [
      { key: 'accessKeyId', label: 'Access key id', required: true },
      { key: 'secretAccessKey', label: 'Secret access key', required: true },
    ],
  },
  sftp: {
    label: 'SFTP',
    config: [
      { key: 'host', label: 'Host', required: true },
      { key: 'port', label: 'Port', type: 'number' },
      { key: 'username', label: 'Username', required: true },
      { key: 'directory', label: 'Directory', required: true },
      { key: 'hostKeySha256', label: 'Host key (SHA256:…)', required: true, description: 'As ssh-keygen -l -E sha256 prints it' },
    ],
    secrets: [
      { key: 'password', label: 'Password' },
      { key: 'privateKey', label: 'Private key', type: 'textarea' },
      { key: 'passphrase', label: 'Key passphrase' },
    ],
  },
  webdav: {
    label: 'WebDAV',
    config: [
      { key: 'baseUrl', label: 'Base URL', required: true },
      { key: 'directory', label: 'Directory' },
      { key: 'username', label: 'Username' },
    ],
    secrets: [{ key: 'password', label: 'Password' }],
  },
};

const KIND_CHOICES = (Object.keys(KINDS) as Kind[]).map((k) => ({ value: k, label: KINDS[k].label }));

/** The project's delivery channels: create and edit (secrets write-only), test, switch off, delete. */
export function ChannelsPage() {
  const { team } = useSession();
  const { canWrite, isAdmin } = useCanWrite();
  const queries = useQueryClient();
  const [editing, setEditing] = useState<Channel | 'new'>();
  const channels = useQuery({
    queryKey: ['reporting-channels', team?.id],
    queryFn: () => call(api.GET('/api/reporting/channels', { params: { query: { limit: 100, page: 1 } } })),
    enabled: !!team,
  });
  const test = useMutation({
    mutationFn: async (c: Channel) => ({ channel: c, outcome: await call(api.POST('/api/reporting/channels/{id}/test', { params: { path: { id: c.id } }, body: {} })) }),
    onSettled: () => queries.invalidateQueries({ queryKey: ['reporting-channels'] }),
  });
  const remove = useMutation({
    mutationFn: async (id: string) => {
      const { error, response } = await api.DELETE('/api/reporting/channels/{id}', { params: { path: { id } } });
      if (error !== undefined || !response.ok) await call(Promise.resolve({ error }));
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-channels'] }),
  });
  const list = channels.data?.data ?? [];
  // E-mail channels are members'; the kinds that hold secrets are admins' (docs/reporting.md "Channels").
  const mayManage = (kind: string) => (kind === 'email' ? canWrite : isAdmin);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Channels</Title>
        {canWrite && <Button onClick={() => setEditing('new')}>New channel</Button>}
      </Group>
      <Text size="sm" c="dimmed">
        Where runs deliver their files: e-mail, Slack, Teams, a signed webhook, or a file share (S3, SFTP, WebDAV). Secrets are write-only: once saved, they are never shown.
      </Text>
      <ProblemAlert error={channels.error ?? remove.error ?? test.error} />
      {test.data && (
        <Alert color={test.data.outcome.ok ? 'green' : 'red'} role="status" title={`Test of ${test.data.channel.name}`}>
          {test.data.outcome.ok ? `Succeeded in ${test.data.outcome.durationMs} ms.` : `Failed: ${test.data.outcome.error ?? 'no reason given'}.`}
          {test.data.outcome.details && (
            <Text size="xs" c="dimmed">
              {Object.entries(test.data.outcome.details)
                .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
                .join(' · ')}
            </Text>
          )}
        </Alert>
      )}
      {channels.data && list.length === 0 && <Text c="dimmed">No channels yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="Channels">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Last test</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((c) => (
              <Table.Tr key={c.id}>
                <Table.Td>{c.name}</Table.Td>
                <Table.Td>{KINDS[c.kind]?.label ?? c.kind}</Table.Td>
                <Table.Td>{c.isActive ? <Badge color="green">active</Badge> : <Badge color="gray">off</Badge>}</Table.Td>
                <Table.Td>
                  {c.lastTest ? (
                    <Text size="sm" c={c.lastTest.ok ? undefined : 'red'}>
                      {c.lastTest.ok ? 'passed' : `failed: ${c.lastTest.error ?? ''}`} ({when(c.lastTest.at)})
                    </Text>
                  ) : (
                    'never'
                  )}
                </Table.Td>
                <Table.Td>
                  {mayManage(c.kind) && (
                    <Group gap="xs" wrap="nowrap">
                      <Button size="compact-sm" variant="default" aria-label={`Test ${c.name}`} loading={test.isPending && test.variables?.id === c.id} onClick={() => test.mutate(c)}>
                        Test
                      </Button>
                      <Button size="compact-sm" variant="default" aria-label={`Edit ${c.name}`} onClick={() => setEditing(c)}>
                        Edit
                      </Button>
                      <ConfirmButton label="Delete" name={`Delete ${c.name}`} title="Delete the channel?" confirm="Delete" onConfirm={() => remove.mutate(c.id)}>
                        {c.name} and its secrets go. A channel a schedule or job names cannot be deleted.
                      </ConfirmButton>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {editing && <ChannelDialog channel={editing === 'new' ? undefined : editing} isAdmin={isAdmin} onClose={() => setEditing(undefined)} />}
    </Stack>
  );
}

const textOf = (v: unknown): string => (v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? '' : String(v));

function ChannelDialog({ channel, isAdmin, onClose }: { channel: Channel | undefined; isAdmin: boolean; onClose: () => void }) {
  const queries = useQueryClient();
  const [name, setName] = useState(channel?.name ?? '');
  const [kind, setKind] = useState<Kind>(channel?.kind ?? (isAdmin ? 'webhook' : 'email'));
  const [values, setValues] = useState<Record<string, string>>(() => {
    if (!channel) return {};
    const config = channel.config;
    const shown = Object.fromEntries(KINDS[channel.kind].config.map((f) => [f.key, f.type === 'headers' ? Object.keys((config.headers as object) ?? {}).map((h) => `${h}:`).join('\n') : textOf(config[f.key])]));
    return shown;
  });
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [extra, setExtra] = useState<unknown>(() => {
    if (!channel) return undefined;
    const known = new Set(KINDS[channel.kind].config.map((f) => f.key));
    const rest = Object.fromEntries(Object.entries(channel.config).filter(([k]) => !known.has(k)));
    return Object.keys(rest).length > 0 ? rest : undefined;
  });
  const [isActive, setActive] = useState(channel?.isActive ?? true);
  const spec = KINDS[kind];
  const save = useMutation({
    mutationFn: () => {
      const config: Record<string, unknown> = { ...((extra as Record<string, unknown> | undefined) ?? {}) };
      for (const f of spec.config) {
        const v = (values[f.key] ?? '').trim();
        if (f.type === 'headers') {
          const headers: Record<string, unknown> = {};
          for (const line of v.split('\n')) {
            const at = line.indexOf(':');
            if (at <= 0) continue;
            const header = line.slice(0, at).trim();
            const value = line.slice(at + 1).trim();
            headers[header] = value === '' ? { set: true } : value;
          }
          if (Object.keys(headers).length > 0 || channel) config.headers = headers;
          continue;
        }
        if (!v) continue;
        config[f.key] = f.type === 'list' ? v.split(/[,\n]/).map((s) => s.trim()).filter(Boolean) : f.type === 'number' ? Number(v) : v;
      }
      const given = Object.fromEntries(Object.entries(secrets).filter(([, v]) => v !== ''));
      const withSecrets = Object.keys(given).length > 0 ? { secrets: given } : {};
      return channel
        ? call(api.PATCH('/api/reporting/channels/{id}', { params: { path: { id: channel.id } }, body: { name, config, isActive, ...withSecrets } }))
        : call(api.POST('/api/reporting/channels', { body: { name, kind, config, isActive, ...withSecrets } }));
    },
    onSuccess: (saved) => {
      setSecrets({});
      void queries.invalidateQueries({ queryKey: ['reporting-channels'] });
      // A webhook's signing secret is shown this once; everything else closes at once.
      if (!('secret' in saved && saved.secret)) onClose();
    },
  });
  const created = save.data && 'secret' in save.data && typeof save.data.secret === 'string' ? save.data.secret : undefined;
  return (
    <Modal opened onClose={onClose} title={channel ? 'Edit channel' : 'New channel'} size="lg">
      {created ? (
        <Stack>
          <Text>
            The receiver checks each request&apos;s <code>X-Service-Signature</code> with this signing secret. This is the only time it is shown: copy it now.
          </Text>
          <ShownOnce label="Signing secret" value={created} />
          <Group>
            <Button variant="default" onClick={onClose}>
              Done
            </Button>
          </Group>
        </Stack>
      ) : (
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <Stack>
            <ProblemAlert error={save.error} title="Not saved" />
            <TextInput label="Channel name" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <Select
              label="Kind"
              allowDeselect={false}
              data={KIND_CHOICES.filter((k) => isAdmin || k.value === 'email')}
              value={kind}
              onChange={(v) => {
                setKind((v ?? 'email') as Kind);
                setValues({});
                setSecrets({});
              }}
              disabled={!!channel}
              description={isAdmin ? undefined : 'Kinds that hold secrets need a project admin'}
            />
            {spec.config.map((f) =>
              f.type === 'textarea' || f.type === 'headers' ? (
                <Textarea key={f.key} label={f.label} description={f.description} required={f.required} autosize minRows={2} value={values[f.key] ?? ''} onChange={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })} />
              ) : f.type === 'select' ? (
                <Select key={f.key} label={f.label} description={f.description} data={f.options ?? []} clearable value={values[f.key] || null} onChange={(v) => setValues({ ...values, [f.key]: v ?? '' })} />
              ) : f.type === 'number' ? (
                <NumberInput key={f.key} label={f.label} description={f.description} value={values[f.key] ?? ''} onChange={(v) => setValues({ ...values, [f.key]: String(v) })} />
              ) : (
                <TextInput key={f.key} label={f.label} description={f.description} required={f.required} value={values[f.key] ?? ''} onChange={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })} />
              ),
            )}
            {spec.secrets.map((f) => {
              const stored = channel?.secrets[f.key];
              return (
                <PasswordInput
                  key={f.key}
                  label={f.label}
                  autoComplete="off"
                  required={f.required && !stored}
                  description={stored ? `Set ${when(stored.updatedAt)}; never shown. Leave empty to keep it.` : 'Write-only: never shown after saving'}
                  value={secrets[f.key] ?? ''}
                  onChange={(e) => setSecrets({ ...secrets, [f.key]: e.currentTarget.value })}
                />
              );
            })}
            <JsonField label="Other settings (JSON)" description='Further fields of this kind (docs/reporting.md "Channels"), e.g. {"maxAttachmentMb": 5}' value={extra} onChange={setExtra} />
            <Switch label="Active" description="An inactive channel is sent nothing (deliveries are skipped)" checked={isActive} onChange={(e) => setActive(e.currentTarget.checked)} />
            {kind === 'webhook' && !channel && <Text size="sm" c="dimmed">Formwork makes the signing secret and shows it once, after creating.</Text>}
            <Group>
              <Button type="submit" loading={save.isPending} disabled={!name.trim()}>
                {channel ? 'Save' : 'Create'}
              </Button>
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
