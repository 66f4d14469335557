import { Anchor, Button, Checkbox, Group, NumberInput, Paper, PasswordInput, SegmentedControl, Select, SimpleGrid, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, must } from '../../../api';
import { useSession } from '../../../session';
import { isAdmin } from './Datasources';
import { call, ErrorAlert, KIND_NAMES, problemsAt, type Datasource } from './shared';
import { TestOutcome } from './TestOutcome';

type Kind = Datasource['kind'];

interface Form {
  name: string;
  description: string;
  kind: Kind;
  mode: 'direct' | 'agent';
  agentId: string | null;
  host: string;
  port: number | string;
  database: string;
  user: string;
  password: string;
  ssl: 'verify-full' | 'require' | 'disable';
  caCert: string;
  schemas: string;
  path: string;
  baseUrl: string;
  auth: 'none' | 'basic' | 'bearer' | 'header';
  username: string;
  headerName: string;
  healthPath: string;
  url: string;
  delimiter: string;
  header: boolean;
}

const EMPTY: Form = {
  name: '',
  description: '',
  kind: 'postgres',
  mode: 'direct',
  agentId: null,
  host: '',
  port: '',
  database: '',
  user: '',
  password: '',
  ssl: 'verify-full',
  caCert: '',
  schemas: '',
  path: '',
  baseUrl: '',
  auth: 'none',
  username: '',
  headerName: '',
  healthPath: '/',
  url: '',
  delimiter: ',',
  header: true,
};

/** The create body of the form: only the fields of its kind; the secret only when typed. */
function bodyOf(f: Form) {
  const sql = f.kind === 'postgres' || f.kind === 'mysql';
  const mode = f.kind === 'sqlite' ? 'agent' : sql ? f.mode : 'direct';
  let config: Record<string, unknown> = {};
  let secrets: Record<string, string> | undefined;
  if (sql) {
    config = { host: f.host.trim(), database: f.database.trim(), user: f.user.trim(), ssl: f.ssl };
    if (f.port !== '') config.port = Number(f.port);
    if (f.caCert.trim()) config.caCert = f.caCert;
    const schemas = f.schemas.split(',').map((s) => s.trim()).filter(Boolean);
    if (f.kind === 'postgres' && schemas.length) config.schemas = schemas;
    if (f.password) secrets = { password: f.password };
  } else if (f.kind === 'sqlite') {
    config = { path: f.path.trim() };
  } else if (f.kind === 'http_json') {
    config = { baseUrl: f.baseUrl.trim(), auth: f.auth, healthPath: f.healthPath || '/' };
    if (f.auth === 'basic') config.username = f.username;
    if (f.auth === 'header') config.headerName = f.headerName.trim();
    const secretName = { none: undefined, basic: 'password', bearer: 'token', header: 'headerValue' }[f.auth];
    if (secretName && f.password) secrets = { [secretName]: f.password };
  } else {
    config = { source: 'url', url: f.url.trim(), delimiter: f.delimiter, header: f.header };
  }
  return {
    name: f.name.trim(),
    ...(f.description.trim() ? { description: f.description.trim() } : {}),
    kind: f.kind,
    connectionMode: mode,
    ...(mode === 'agent' ? { agentId: f.agentId } : {}),
    config,
    ...(secrets ? { secrets } : {}),
  };
}

/**
 * "New datasource": the kind, where it connects and the credentials (the password is write-only: sent,
 * never shown again), "Test connection" on the settings as typed (nothing saved), then "Create
 * datasource". The API's problems are shown under their fields.
 */
export function NewDatasourcePage() {
  const { team } = useSession();
  const navigate = useNavigate();
  const [form, setForm] = useState<Form>(EMPTY);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));
  const agents = useQuery({
    queryKey: ['reporting-agents', team?.id],
    queryFn: () => must(api.GET('/api/agents', { params: { query: { limit: 100 } } })),
    enabled: !!team,
  });
  const test = useMutation({ mutationFn: () => call(api.POST('/api/reporting/datasources/test', { body: bodyOf(form) })) });
  const create = useMutation({
    mutationFn: () => call(api.POST('/api/reporting/datasources', { body: bodyOf(form) })),
    onSuccess: (d) => navigate(`/reporting/datasources/${d.id}`, { state: { created: true } }),
  });
  const error = create.error ?? test.error;
  const at = (path: string) => {
    const found = problemsAt(error, path);
    return found.length ? found.map((p) => p.message).join('; ') : undefined;
  };
  const sql = form.kind === 'postgres' || form.kind === 'mysql';
  const viaAgent = form.kind === 'sqlite' || (sql && form.mode === 'agent');
  const secretLabel = form.kind === 'http_json' ? { none: '', basic: 'Password', bearer: 'Bearer token', header: 'Header value' }[form.auth] : 'Password';
  const secretPath = form.kind === 'http_json' ? `secrets.${{ none: '', basic: 'password', bearer: 'token', header: 'headerValue' }[form.auth]}` : 'secrets.password';
  const shownPaths = ['name', 'description', 'agentId', 'config.host', 'config.port', 'config.database', 'config.user', 'config.ssl', 'config.caCert', 'config.schemas', 'config.path', 'config.baseUrl', 'config.username', 'config.headerName', 'config.healthPath', 'config.url', secretPath];

  if (!isAdmin(team?.role)) {
    return (
      <Stack>
        <Title order={2}>New datasource</Title>
        <Text c="dimmed">Only the project&apos;s admins and owner add datasources (they hold credentials).</Text>
      </Stack>
    );
  }
  const submit = (e: FormEvent) => {
    e.preventDefault();
    test.reset();
    create.mutate();
  };
  return (
    <Stack maw={760}>
      <div>
        <Anchor component={Link} to="/reporting/datasources" size="sm">
          Datasources
        </Anchor>
        <Title order={2}>New datasource</Title>
      </div>
      <form onSubmit={submit} aria-label="New datasource">
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label="Name" required value={form.name} onChange={(e) => set('name', e.currentTarget.value)} error={at('name')} />
            <Select
              label="Kind"
              allowDeselect={false}
              value={form.kind}
              onChange={(v) => v && set('kind', v as Kind)}
              data={(Object.keys(KIND_NAMES) as Kind[]).map((k) => ({ value: k, label: KIND_NAMES[k] }))}
            />
          </SimpleGrid>
          <TextInput label="Description" value={form.description} onChange={(e) => set('description', e.currentTarget.value)} error={at('description')} />

          {sql && (
            <Stack gap={4}>
              <Text size="sm" fw={500} id="ds-connection-label">
                Connection
              </Text>
              <SegmentedControl
                aria-labelledby="ds-connection-label"
                value={form.mode}
                onChange={(v) => set('mode', v as Form['mode'])}
                data={[
                  { value: 'direct', label: 'Formwork connects' },
                  { value: 'agent', label: 'Through an agent' },
                ]}
              />
            </Stack>
          )}
          {viaAgent && (
            <Select
              label="Agent"
              required
              placeholder={agents.data?.data.length ? 'Choose an agent' : 'No agents yet: register one on the Datasources page'}
              value={form.agentId}
              onChange={(v) => set('agentId', v)}
              data={(agents.data?.data ?? []).map((a) => ({ value: a.id, label: `${a.name} (${a.status.replace('_', ' ')})` }))}
              error={at('agentId')}
            />
          )}

          <Paper withBorder p="md">
            <Stack>
              {sql && (
                <>
                  <SimpleGrid cols={{ base: 1, sm: 3 }}>
                    <TextInput label="Host" required value={form.host} onChange={(e) => set('host', e.currentTarget.value)} error={at('config.host')} style={{ gridColumn: 'span 2' }} />
                    <NumberInput label="Port" placeholder={form.kind === 'postgres' ? '5432' : '3306'} min={1} max={65535} value={form.port} onChange={(v) => set('port', v)} error={at('config.port')} />
                  </SimpleGrid>
                  <SimpleGrid cols={{ base: 1, sm: 2 }}>
                    <TextInput label="Database" required value={form.database} onChange={(e) => set('database', e.currentTarget.value)} error={at('config.database')} />
                    <TextInput label="User" required value={form.user} onChange={(e) => set('user', e.currentTarget.value)} error={at('config.user')} autoComplete="off" />
                  </SimpleGrid>
                  <SimpleGrid cols={{ base: 1, sm: 2 }}>
                    <PasswordInput label="Password" description="Write-only: stored encrypted, never shown again" value={form.password} onChange={(e) => set('password', e.currentTarget.value)} error={at('secrets.password')} autoComplete="new-password" />
                    <Select
                      label="TLS"
                      allowDeselect={false}
                      value={form.ssl}
                      onChange={(v) => v && set('ssl', v as Form['ssl'])}
                      data={[
                        { value: 'verify-full', label: 'Encrypted, certificate checked' },
                        { value: 'require', label: 'Encrypted, certificate not checked' },
                        { value: 'disable', label: 'Not encrypted' },
                      ]}
                      error={at('config.ssl')}
                    />
                  </SimpleGrid>
                  {form.kind === 'postgres' && (
                    <TextInput label="Schemas" description="The schemas to list, separated by commas (all when empty)" value={form.schemas} onChange={(e) => set('schemas', e.currentTarget.value)} error={at('config.schemas')} />
                  )}
                  {form.ssl !== 'disable' && (
                    <Textarea label="CA certificate (PEM)" description="When the server's certificate is signed by your own authority" autosize minRows={2} maxRows={6} value={form.caCert} onChange={(e) => set('caCert', e.currentTarget.value)} error={at('config.caCert')} />
                  )}
                </>
              )}
              {form.kind === 'sqlite' && <TextInput label="Path on the agent's host" required placeholder="/var/lib/app/data.db" value={form.path} onChange={(e) => set('path', e.currentTarget.value)} error={at('config.path')} />}
              {form.kind === 'http_json' && (
                <>
                  <TextInput label="Base URL" required placeholder="https://api.example.com/v1" value={form.baseUrl} onChange={(e) => set('baseUrl', e.currentTarget.value)} error={at('config.baseUrl')} />
                  <SimpleGrid cols={{ base: 1, sm: 2 }}>
                    <Select
                      label="Authentication"
                      allowDeselect={false}
                      value={form.auth}
                      onChange={(v) => v && set('auth', v as Form['auth'])}
                      data={[
                        { value: 'none', label: 'None' },
                        { value: 'basic', label: 'User and password' },
                        { value: 'bearer', label: 'Bearer token' },
                        { value: 'header', label: 'A header' },
                      ]}
                    />
                    <TextInput label="Health path" description="What the connection test GETs" value={form.healthPath} onChange={(e) => set('healthPath', e.currentTarget.value)} error={at('config.healthPath')} />
                  </SimpleGrid>
                  {form.auth === 'basic' && <TextInput label="User name" required value={form.username} onChange={(e) => set('username', e.currentTarget.value)} error={at('config.username')} />}
                  {form.auth === 'header' && <TextInput label="Header name" required value={form.headerName} onChange={(e) => set('headerName', e.currentTarget.value)} error={at('config.headerName')} />}
                  {form.auth !== 'none' && (
                    <PasswordInput label={secretLabel} description="Write-only: stored encrypted, never shown again" value={form.password} onChange={(e) => set('password', e.currentTarget.value)} error={at(secretPath)} autoComplete="new-password" />
                  )}
                </>
              )}
              {form.kind === 'csv' && (
                <>
                  <TextInput label="CSV file URL" required placeholder="https://example.com/export.csv" value={form.url} onChange={(e) => set('url', e.currentTarget.value)} error={at('config.url')} />
                  <Group>
                    <Select
                      label="Delimiter"
                      allowDeselect={false}
                      value={form.delimiter}
                      onChange={(v) => v && set('delimiter', v)}
                      data={[
                        { value: ',', label: 'Comma' },
                        { value: ';', label: 'Semicolon' },
                        { value: '\t', label: 'Tab' },
                        { value: '|', label: 'Vertical bar' },
                      ]}
                    />
                    <Checkbox mt="lg" label="The first line names the columns" checked={form.header} onChange={(e) => set('header', e.currentTarget.checked)} />
                  </Group>
                </>
              )}
            </Stack>
          </Paper>

          <ErrorAlert error={error} shown={shownPaths} />
          <TestOutcome outcome={test.data} pending={test.isPending} error={null} />
          <Group justify="flex-end">
            <Button variant="default" loading={test.isPending} onClick={() => {
                create.reset();
                test.mutate();
              }}>
              Test connection
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create datasource
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  );
}
