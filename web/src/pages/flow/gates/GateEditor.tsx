import { Alert, Anchor, Badge, Button, Center, Code, Grid, Group, Input, Loader, NumberInput, Paper, Select, Stack, Tabs, TagsInput, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, errorText, mustSucceed } from '../../../api';
import { useSession } from '../../../session';
import { ConfirmButton } from '../../controls';
import { CodeEditor } from './CodeEditor';
import { GateSettings } from './GateSettings';
import { emptySchema, fieldPaths, parseSchema, problemsOf, samplePayload, SaveError, STATUS_WORDS, type BusinessRule, type Gate, type GateVersion, type ObjectSchema, type Problem } from './model';
import { RulesEditor } from './RulesEditor';
import { SchemaBuilder } from './SchemaBuilder';
import { changedFields, newSettings, settingsBody, settingsOf, type SettingsForm } from './settings';
import { TestConsole } from './TestConsole';
import { ImportFromTemplate, Versions } from './Versions';

/** JSON with object keys sorted: Postgres' jsonb gives keys back in its own order, which is no change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}

const pretty = (schema: ObjectSchema) => JSON.stringify(schema, null, 2);

/** The data of a call, or a SaveError with the API's message and its listed problems. */
async function saved<T>(call: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await call;
  if (error !== undefined || data === undefined) throw new SaveError(errorText(error), problemsOf(error));
  return data;
}

/** `/flow/gates/:id`: the gate read, then edited. */
export function GatePage() {
  const { id } = useParams();
  const { team } = useSession();
  const gate = useQuery({
    queryKey: ['gate', team?.id, id],
    queryFn: async () => {
      const { data, error } = await api.GET('/api/flow/gates/{id}', { params: { path: { id: id! } } });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data;
    },
    enabled: !!team && !!id,
  });
  if (gate.error) {
    return (
      <Stack>
        <Anchor component={Link} to="/flow/gates" size="sm">
          Gates
        </Anchor>
        <Alert color="red" role="alert">
          {gate.error.message}
        </Alert>
      </Stack>
    );
  }
  if (!gate.data) {
    return (
      <Center h="40vh">
        <Loader aria-label="Loading the gate" />
      </Center>
    );
  }
  return <GateEditor key={gate.data.id} gate={gate.data} />;
}

/**
 * Creating (no `gate`) or editing a gate (docs/web.md "Flow: gates"): the gate's name and mode, the
 * schema builder beside its JSON, the business rules, the test console, the settings (render,
 * approval, delivery, limits), the schema versions and the import from a template; pause, archive
 * and delete. One "Save changes" sends what changed: the settings (`PUT /gates/:id`) and the
 * schema and rules as the next version (`PUT /gates/:id/schema`).
 */
export function GateEditor({ gate }: { gate?: Gate }) {
  const { team } = useSession();
  const canEdit = team?.role !== 'viewer';
  const readOnly = !canEdit;
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [schema, setSchemaState] = useState<ObjectSchema>(gate?.schema ?? emptySchema());
  const [jsonText, setJsonText] = useState(() => pretty(gate?.schema ?? emptySchema()));
  const [jsonError, setJsonError] = useState<string>();
  const [rules, setRules] = useState<BusinessRule[]>(gate?.businessRules ?? []);
  const [form, setForm] = useState<SettingsForm>(() => (gate ? settingsOf(gate) : newSettings()));
  const [problems, setProblems] = useState<Problem[]>([]);
  const [tab, setTab] = useState<string | null>('schema');

  const setSchema = (next: ObjectSchema) => {
    setSchemaState(next);
    setJsonText(pretty(next));
    setJsonError(undefined);
  };
  const reset = (g: Gate, keepOrder = false) => {
    // The API's jsonb answers keys in its own order: keep the editor's order when nothing else changed.
    if (!keepOrder || canonical(g.schema ?? emptySchema()) !== canonical(schema)) setSchema(g.schema ?? emptySchema());
    if (!keepOrder || canonical(g.businessRules) !== canonical(rules)) setRules(g.businessRules);
    setForm(settingsOf(g));
    setProblems([]);
  };

  const storedSettings = gate ? settingsBody(settingsOf(gate)) : undefined;
  const nextSettings = settingsBody(form);
  const settingsChanges = storedSettings ? changedFields(storedSettings, nextSettings) : nextSettings;
  const schemaChanged = !gate || canonical(gate.schema ?? emptySchema()) !== canonical(schema) || canonical(gate.businessRules) !== canonical(rules);
  const dirty = !gate || schemaChanged || Object.keys(settingsChanges).length > 0;
  const freetext = form.validationMode === 'freetext';

  const save = useMutation({
    mutationFn: async (): Promise<Gate> => {
      if (!form.name.trim()) throw new SaveError('The gate needs a name.', [{ field: 'name', message: 'is required' }]);
      if (!gate) {
        return saved(api.POST('/api/flow/gates', { body: { ...nextSettings, schema: freetext ? null : schema, businessRules: rules } }));
      }
      let current = gate;
      if (Object.keys(settingsChanges).length > 0) current = await saved(api.PUT('/api/flow/gates/{id}', { params: { path: { id: gate.id } }, body: settingsChanges }));
      if (schemaChanged) current = await saved(api.PUT('/api/flow/gates/{id}/schema', { params: { path: { id: gate.id } }, body: { schema, businessRules: rules } }));
      return current;
    },
    onSuccess: async (result) => {
      setProblems([]);
      await queries.invalidateQueries({ queryKey: ['gates'] });
      if (!gate) {
        void navigate(`/flow/gates/${result.id}`, { replace: true });
        return;
      }
      queries.setQueryData(['gate', team?.id, gate.id], result);
      reset(result, true);
    },
    onError: (error) => setProblems(error instanceof SaveError ? error.problems : []),
  });

  const setStatus = useMutation({
    mutationFn: (status: Gate['status']) => saved(api.PUT('/api/flow/gates/{id}', { params: { path: { id: gate!.id } }, body: { status } })),
    onSuccess: (result) => {
      queries.setQueryData(['gate', team?.id, gate!.id], result);
      return queries.invalidateQueries({ queryKey: ['gates'] });
    },
  });
  const remove = useMutation({
    mutationFn: () => mustSucceed(api.DELETE('/api/flow/gates/{id}', { params: { path: { id: gate!.id } } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['gates'] });
      void navigate('/flow/gates', { state: { notice: `${gate!.name} was deleted; its runs stay readable under Runs.` } });
    },
  });

  const loadVersion = (v: GateVersion) => {
    setSchema(v.schema ?? emptySchema());
    setRules(v.businessRules);
    setTab('schema');
  };
  const schemaProblems = problems.filter((p) => !p.field.startsWith('businessRules'));
  const status = gate ? STATUS_WORDS[gate.status] : undefined;

  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <div>
          <Anchor component={Link} to="/flow/gates" size="sm">
            Gates
          </Anchor>
          <Group gap="sm">
            <Title order={2}>{gate ? gate.name : 'New gate'}</Title>
            {status && gate && (
              <Badge color={status.colour} variant="light">
                {status.word}
              </Badge>
            )}
          </Group>
          {gate && (
            <Text size="sm" c="dimmed">
              {gate.shortId} · {gate.slug} · schema version {gate.schemaVersion}
            </Text>
          )}
        </div>
        {gate && canEdit && (
          <Group gap="xs">
            {gate.status === 'active' && (
              <Button variant="default" loading={setStatus.isPending && setStatus.variables === 'paused'} onClick={() => setStatus.mutate('paused')}>
                Pause
              </Button>
            )}
            {gate.status !== 'active' && (
              <Button variant="default" loading={setStatus.isPending && setStatus.variables === 'active'} onClick={() => setStatus.mutate('active')}>
                {gate.status === 'paused' ? 'Resume' : 'Restore'}
              </Button>
            )}
            {gate.status !== 'archived' && (
              <ConfirmButton size="sm" color="gray" label="Archive" name="Archive the gate" title="Archive the gate?" confirm="Archive" onConfirm={() => setStatus.mutate('archived')}>
                An archived gate refuses submissions (409) until it is restored. Its runs and versions stay.
              </ConfirmButton>
            )}
            <ConfirmButton size="sm" label="Delete" name="Delete the gate" title="Delete the gate?" confirm="Delete" onConfirm={() => remove.mutate()}>
              {gate.name} stops taking submissions and leaves the list. Its runs stay readable under Runs.
            </ConfirmButton>
          </Group>
        )}
      </Group>
      {gate?.status === 'paused' && <Alert color="yellow">This gate is paused: submissions are refused (409), the test console still works.</Alert>}
      {gate?.status === 'archived' && <Alert color="gray">This gate is archived: submissions are refused (409).</Alert>}
      {(setStatus.error ?? remove.error) && (
        <Alert color="red" role="alert">
          {(setStatus.error ?? remove.error)?.message}
        </Alert>
      )}
      {readOnly && <Text c="dimmed">You can read this gate; members and above change it.</Text>}

      <Paper withBorder p="md" component="section" aria-label="Gate">
        <Grid>
          <Grid.Col span={{ base: 12, md: 4 }}>
            <TextInput label="Name" required maxLength={255} readOnly={readOnly} value={form.name} onChange={(e) => setForm({ ...form, name: e.currentTarget.value })} data-autofocus={!gate || undefined} />
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 5 }}>
            <TextInput label="Description" maxLength={1000} readOnly={readOnly} value={form.description} onChange={(e) => setForm({ ...form, description: e.currentTarget.value })} />
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 3 }}>
            <Select
              label="Payload"
              allowDeselect={false}
              readOnly={readOnly}
              data={[
                { value: 'variables', label: 'JSON fields (schema)' },
                { value: 'freetext', label: 'Free text' },
              ]}
              value={form.validationMode}
              onChange={(v) => v && setForm({ ...form, validationMode: v as SettingsForm['validationMode'] })}
            />
          </Grid.Col>
        </Grid>
      </Paper>

      {problems.length > 0 && (
        <Alert color="red" role="alert" title="Not saved: the API found problems">
          {problems.map((p) => (
            <Text key={`${p.field}${p.message}`} size="sm">
              <Text span ff="monospace" size="sm">
                {p.field}
              </Text>{' '}
              {p.message}
            </Text>
          ))}
        </Alert>
      )}
      {save.error && problems.length === 0 && (
        <Alert color="red" role="alert">
          {save.error.message}
        </Alert>
      )}
      {canEdit && (
        <Group>
          <Button onClick={() => save.mutate()} loading={save.isPending} disabled={!dirty}>
            {gate ? 'Save changes' : 'Create gate'}
          </Button>
          {gate && dirty && (
            <Button variant="default" onClick={() => reset(gate)}>
              Discard changes
            </Button>
          )}
          {gate && (
            <Text size="sm" c="dimmed" role="status">
              {dirty ? (schemaChanged ? 'Unsaved changes: saving makes schema version ' + (gate.schemaVersion + 1) : 'Unsaved changes') : 'All changes saved'}
            </Text>
          )}
        </Group>
      )}

      <Tabs value={tab} onChange={setTab}>
        <Tabs.List>
          <Tabs.Tab value="schema">{freetext ? 'Text checks and rules' : 'Schema and rules'}</Tabs.Tab>
          <Tabs.Tab value="test">Test console</Tabs.Tab>
          <Tabs.Tab value="settings">Render, approval, delivery</Tabs.Tab>
          {gate && <Tabs.Tab value="versions">Versions</Tabs.Tab>}
        </Tabs.List>

        <Tabs.Panel value="schema" pt="md">
          <Stack>
            {freetext ? (
              <FreetextChecks form={form} onChange={setForm} readOnly={readOnly} />
            ) : (
              <Grid>
                <Grid.Col span={{ base: 12, lg: 8 }}>
                  <Paper withBorder p="md" component="section" aria-label="Schema builder">
                    <Stack gap="sm">
                      <Title order={3} size="h4">
                        Fields
                      </Title>
                      {schemaProblems.length > 0 && (
                        <Alert color="red" p="xs">
                          {schemaProblems.map((p) => `${p.field}: ${p.message}`).join('; ')}
                        </Alert>
                      )}
                      <SchemaBuilder schema={schema} onChange={setSchema} readOnly={readOnly} />
                    </Stack>
                  </Paper>
                </Grid.Col>
                <Grid.Col span={{ base: 12, lg: 4 }}>
                  <Paper withBorder p="md" component="section" aria-label="Schema JSON">
                    <Stack gap="sm">
                      <Title order={3} size="h4">
                        JSON
                      </Title>
                      <Input.Wrapper label="The schema as JSON" labelElement="div" description="Kept in step with the fields: edit either" error={jsonError}>
                        <CodeEditor
                          label="Schema (JSON)"
                          language="json"
                          text={jsonText}
                          readOnly={readOnly}
                          minHeight={200}
                          onText={(text) => {
                            setJsonText(text);
                            const parsed = parseSchema(text);
                            setJsonError(parsed.error);
                            if (parsed.schema) setSchemaState(parsed.schema);
                          }}
                        />
                      </Input.Wrapper>
                    </Stack>
                  </Paper>
                </Grid.Col>
              </Grid>
            )}
            <Paper withBorder p="md" component="section" aria-label="Business rules">
              <Stack gap="sm">
                <Title order={3} size="h4">
                  Business rules
                </Title>
                <RulesEditor rules={rules} onChange={setRules} readOnly={readOnly} fieldPaths={fieldPaths(schema)} problems={problems} freetext={freetext} />
              </Stack>
            </Paper>
          </Stack>
        </Tabs.Panel>

        <Tabs.Panel value="test" pt="md">
          <TestConsole
            gateId={gate?.id}
            freetext={gate ? gate.validationMode === 'freetext' : freetext}
            initialSample={JSON.stringify(samplePayload(gate?.schema), null, 2)}
            savedVersion={gate?.schemaVersion}
            unsaved={!!gate && dirty}
          />
        </Tabs.Panel>

        <Tabs.Panel value="settings" pt="md">
          <GateSettings form={form} onChange={setForm} readOnly={readOnly} gate={gate} />
        </Tabs.Panel>

        {gate && (
          <Tabs.Panel value="versions" pt="md">
            <Stack>
              <Versions gate={gate} onUse={loadVersion} readOnly={readOnly} />
              {canEdit && (
                <ImportFromTemplate
                  gate={gate}
                  onImported={(g) => {
                    queries.setQueryData(['gate', team?.id, gate.id], g);
                    setSchema(g.schema ?? emptySchema());
                    setRules(g.businessRules);
                  }}
                />
              )}
            </Stack>
          </Tabs.Panel>
        )}
      </Tabs>
    </Stack>
  );
}

/** A freetext gate's checks (docs/flow.md "Freetext mode"). */
function FreetextChecks({ form, onChange, readOnly }: { form: SettingsForm; onChange: (next: SettingsForm) => void; readOnly: boolean }) {
  const set = (patch: Partial<SettingsForm['freetext']>) => onChange({ ...form, freetext: { ...form.freetext, ...patch } });
  return (
    <Paper withBorder p="md" component="section" aria-label="Text checks">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Text checks
        </Title>
        <Text size="sm" c="dimmed">
          The payload is text; lengths are in characters. Patterns are RE2 regular expressions ((?i) for any case).
        </Text>
        <Group align="flex-start">
          <NumberInput label="Min length" w={160} min={0} allowDecimal={false} readOnly={readOnly} value={form.freetext.minLength} onChange={(v) => set({ minLength: typeof v === 'number' ? v : '' })} />
          <NumberInput label="Max length" w={160} min={0} allowDecimal={false} readOnly={readOnly} value={form.freetext.maxLength} onChange={(v) => set({ maxLength: typeof v === 'number' ? v : '' })} />
        </Group>
        <TagsInput label="Required patterns" description="Each must be found; Enter after each" readOnly={readOnly} value={form.freetext.requiredPatterns} onChange={(v) => set({ requiredPatterns: v })} />
        <TagsInput label="Forbidden patterns" description="None may be found" readOnly={readOnly} value={form.freetext.forbiddenPatterns} onChange={(v) => set({ forbiddenPatterns: v })} />
        <Text size="sm">
          Rules see <Code>{'{ text, length, lines, words }'}</Code>.
        </Text>
      </Stack>
    </Paper>
  );
}
