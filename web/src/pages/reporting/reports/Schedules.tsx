import { Alert, Anchor, Button, Checkbox, Group, List, Loader, Modal, MultiSelect, NumberInput, Paper, SegmentedControl, Select, SimpleGrid, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { components } from '@formwork/client';
import { api } from '../../../api';
import { JsonField } from '../../../JsonField';
import { useSession } from '../../../session';
import { ConfirmButton, when } from '../../controls';
import { browserZone, builderOf, cronOf, DAYS, DEFAULT_BUILDER, PRESETS, timeZones, type Builder, type Preset } from './cron';
import { call, ProblemAlert } from './problems';
import { inZone, StatusBadge, useCanWrite, useChannels, useReports, type Job, type Schedule } from './shared';

type Triggered = components['schemas']['TriggeredSchedule'];
const triggerSchedule = (id: string) => call(api.POST('/api/reporting/schedules/{id}/trigger', { params: { path: { id } } }));

/** What "Run now" started: a link to the run, or why nothing started. */
function TriggeredNote({ triggered }: { triggered: Triggered | undefined }) {
  if (!triggered) return null;
  if (triggered.skipped) return <Alert color="yellow" role="status">A run of this schedule is still going: this one was skipped.</Alert>;
  return (
    <Alert color="green" role="status" title="Run started">
      {triggered.runId ? (
        <>
          Run {triggered.shortId} is {triggered.status}.{' '}
          <Anchor component={Link} to={`/reporting/runs/${triggered.runId}`}>
            Open the run
          </Anchor>
        </>
      ) : triggered.jobRunId ? (
        <>Job run {triggered.shortId} is {triggered.status}.</>
      ) : (
        <>
          It is starting; it appears under <Anchor component={Link} to="/reporting/runs">Runs</Anchor> in a moment.
        </>
      )}
    </Alert>
  );
}

/** The project's schedules (each with run now, pause and resume) and its jobs. */
export function SchedulesPage() {
  const { team } = useSession();
  const { canWrite } = useCanWrite();
  const queries = useQueryClient();
  const reports = useReports();
  const jobs = useJobs();
  const schedules = useQuery({
    queryKey: ['reporting-schedules', team?.id],
    queryFn: () => call(api.GET('/api/reporting/schedules', { params: { query: { limit: 100, page: 1 } } })),
    enabled: !!team,
  });
  const trigger = useMutation({ mutationFn: triggerSchedule });
  const pause = useMutation({
    mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
      paused ? call(api.POST('/api/reporting/schedules/{id}/pause', { params: { path: { id } }, body: {} })) : call(api.POST('/api/reporting/schedules/{id}/resume', { params: { path: { id } }, body: {} })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-schedules'] }),
  });
  const remove = useMutation({
    mutationFn: async (id: string) => {
      const { error, response } = await api.DELETE('/api/reporting/schedules/{id}', { params: { path: { id } } });
      if (error !== undefined || !response.ok) await call(Promise.resolve({ error }));
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-schedules'] }),
  });
  const targetName = (s: Schedule) =>
    s.target.type === 'report' ? (reports.data?.data.find((r) => r.id === s.target.id)?.name ?? 'a report') : `job ${jobs.data?.data.find((j) => j.id === s.target.id)?.name ?? ''}`;
  const list = schedules.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Schedules</Title>
        {canWrite && (
          <Button component={Link} to="/reporting/schedules/new">
            New schedule
          </Button>
        )}
      </Group>
      <Text size="sm" c="dimmed">
        A schedule runs a published report (or a job) at the times of a cron expression, read in its time zone, and delivers the files to its channels.
      </Text>
      <ProblemAlert error={schedules.error ?? trigger.error ?? pause.error ?? remove.error} />
      <TriggeredNote triggered={trigger.data} />
      {schedules.data && list.length === 0 && <Text c="dimmed">No schedules yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="Schedules">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Runs</Table.Th>
              <Table.Th>When</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Last run</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((s) => (
              <Table.Tr key={s.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/reporting/schedules/${s.id}`}>
                    {s.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{targetName(s)}</Table.Td>
                <Table.Td>
                  <Text size="sm">{s.description ?? s.cron}</Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={s.status} />
                </Table.Td>
                <Table.Td>
                  {s.lastRun ? (
                    <Group gap="xs">
                      <StatusBadge status={s.lastRun.status} />
                      {s.lastRun.runId && (
                        <Anchor component={Link} to={`/reporting/runs/${s.lastRun.runId}`} size="sm">
                          {s.lastRun.scheduledFor ? inZone(s.lastRun.scheduledFor, s.timezone) : 'open'}
                        </Anchor>
                      )}
                    </Group>
                  ) : (
                    'none yet'
                  )}
                </Table.Td>
                <Table.Td>
                  {canWrite && (
                    <Group gap="xs" wrap="nowrap">
                      <Button size="compact-sm" variant="default" aria-label={`Run ${s.name} now`} loading={trigger.isPending && trigger.variables === s.id} onClick={() => trigger.mutate(s.id)}>
                        Run now
                      </Button>
                      <Button size="compact-sm" variant="default" aria-label={`${s.status === 'active' ? 'Pause' : 'Resume'} ${s.name}`} onClick={() => pause.mutate({ id: s.id, paused: s.status === 'active' })}>
                        {s.status === 'active' ? 'Pause' : 'Resume'}
                      </Button>
                      <ConfirmButton label="Delete" name={`Delete ${s.name}`} title="Delete the schedule?" confirm="Delete" onConfirm={() => remove.mutate(s.id)}>
                        {s.name} runs no more; runs it already started finish.
                      </ConfirmButton>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <JobsSection />
    </Stack>
  );
}

function useJobs() {
  const { team } = useSession();
  return useQuery({
    queryKey: ['reporting-jobs', team?.id],
    queryFn: () => call(api.GET('/api/reporting/jobs', { params: { query: { limit: 100, page: 1 } } })),
    enabled: !!team,
  });
}

/** Jobs: several published reports run together and delivered as one bundle (or each by itself). */
function JobsSection() {
  const { canWrite } = useCanWrite();
  const queries = useQueryClient();
  const jobs = useJobs();
  const reports = useReports();
  const [editing, setEditing] = useState<Job | 'new'>();
  const run = useMutation({ mutationFn: (id: string) => call(api.POST('/api/reporting/jobs/{id}/runs', { params: { path: { id } }, body: {} })) });
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/reporting/jobs/{id}', { params: { path: { id } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['reporting-jobs'] }),
  });
  const list = jobs.data?.data ?? [];
  const reportName = (id: string) => reports.data?.data.find((r) => r.id === id)?.name ?? id;
  return (
    <Paper withBorder p="md" component="section" aria-label="Jobs" mt="md">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Jobs
          </Title>
          {canWrite && (
            <Button variant="default" size="xs" onClick={() => setEditing('new')}>
              New job
            </Button>
          )}
        </Group>
        <Text size="sm" c="dimmed">
          A job runs several published reports together; a schedule can run a job.
        </Text>
        <ProblemAlert error={jobs.error ?? run.error ?? remove.error} />
        {run.data && (
          <Alert color="green" role="status">
            Job run {run.data.shortId} is {run.data.status}; its reports&apos; runs appear under <Anchor component={Link} to="/reporting/runs">Runs</Anchor>.
          </Alert>
        )}
        {jobs.data && list.length === 0 && <Text c="dimmed">No jobs yet.</Text>}
        {list.length > 0 && (
          <Table aria-label="Jobs list">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Reports</Table.Th>
                <Table.Th>Delivery</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((j) => (
                <Table.Tr key={j.id}>
                  <Table.Td>{j.name}</Table.Td>
                  <Table.Td>{j.items.map((i) => reportName(i.reportId)).join(', ')}</Table.Td>
                  <Table.Td>{j.delivery === 'bundle' ? 'one bundle' : 'each report by itself'}</Table.Td>
                  <Table.Td>
                    {canWrite && (
                      <Group gap="xs" wrap="nowrap">
                        <Button size="compact-sm" variant="default" aria-label={`Run job ${j.name}`} loading={run.isPending && run.variables === j.id} onClick={() => run.mutate(j.id)}>
                          Run now
                        </Button>
                        <Button size="compact-sm" variant="default" aria-label={`Edit job ${j.name}`} onClick={() => setEditing(j)}>
                          Edit
                        </Button>
                        <ConfirmButton label="Delete" name={`Delete job ${j.name}`} title="Delete the job?" confirm="Delete" onConfirm={() => remove.mutate(j.id)}>
                          {j.name} goes; a job a schedule runs cannot be deleted.
                        </ConfirmButton>
                      </Group>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      {editing && <JobDialog job={editing === 'new' ? undefined : editing} onClose={() => setEditing(undefined)} />}
    </Paper>
  );
}

function JobDialog({ job, onClose }: { job: Job | undefined; onClose: () => void }) {
  const queries = useQueryClient();
  const reports = useReports();
  const channels = useChannels();
  const [name, setName] = useState(job?.name ?? '');
  const [reportIds, setReportIds] = useState<string[]>(job?.items.map((i) => i.reportId) ?? []);
  const [delivery, setDelivery] = useState<'bundle' | 'separate'>(job?.delivery ?? 'bundle');
  const [channelIds, setChannelIds] = useState<string[]>(job?.channelIds ?? []);
  const [stopOnFailure, setStop] = useState(job?.stopOnFailure ?? false);
  const save = useMutation({
    mutationFn: () => {
      const kept = new Map(job?.items.map((i) => [i.reportId, i]) ?? []);
      const body = { name, items: reportIds.map((reportId) => ({ reportId, parameters: kept.get(reportId)?.parameters ?? {} })), delivery, channelIds, stopOnFailure };
      return job ? call(api.PATCH('/api/reporting/jobs/{id}', { params: { path: { id: job.id } }, body: body as never })) : call(api.POST('/api/reporting/jobs', { body: body as never }));
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['reporting-jobs'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={job ? 'Edit job' : 'New job'} size="lg">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <ProblemAlert error={save.error} title="Not saved" />
          <TextInput label="Job name" required value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
          <MultiSelect label="Reports of the job" description="In this order; each runs its newest published version" required searchable data={(reports.data?.data ?? []).map((r) => ({ value: r.id, label: r.name }))} value={reportIds} onChange={setReportIds} />
          <Select
            label="Delivery"
            allowDeselect={false}
            data={[
              { value: 'bundle', label: 'One bundle with every file' },
              { value: 'separate', label: 'Each report delivers itself' },
            ]}
            value={delivery}
            onChange={(v) => setDelivery((v ?? 'bundle') as 'bundle' | 'separate')}
          />
          <MultiSelect label="Job channels" description="Where a run of the job started here delivers" data={(channels.data?.data ?? []).map((c) => ({ value: c.id, label: `${c.name} (${c.kind})` }))} value={channelIds} onChange={setChannelIds} />
          <Switch label="Stop at the first failed report" checked={stopOnFailure} onChange={(e) => setStop(e.currentTarget.checked)} />
          <Group>
            <Button type="submit" loading={save.isPending} disabled={!name.trim() || reportIds.length === 0}>
              {job ? 'Save' : 'Create job'}
            </Button>
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** New or existing schedule, by the route's id. */
export function ScheduleEditor() {
  const { id } = useParams();
  const { team } = useSession();
  const schedule = useQuery({
    queryKey: ['reporting-schedule', team?.id, id],
    queryFn: () => call(api.GET('/api/reporting/schedules/{id}', { params: { path: { id: id! } } })),
    enabled: !!team && !!id,
  });
  if (id && !schedule.data) return schedule.error ? <ProblemAlert error={schedule.error} /> : <Loader aria-label="Loading the schedule" />;
  return <ScheduleForm key={schedule.data?.updatedAt ?? 'new'} schedule={schedule.data} />;
}

function ScheduleForm({ schedule }: { schedule: Schedule | undefined }) {
  const { canWrite } = useCanWrite();
  const { team } = useSession();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const reports = useReports();
  const jobs = useJobs();
  const channels = useChannels();
  const zones = useMemo(timeZones, []);
  const [name, setName] = useState(schedule?.name ?? '');
  const [targetType, setTargetType] = useState<'report' | 'job'>(schedule?.target.type ?? 'report');
  const [targetId, setTargetId] = useState<string | null>(schedule?.target.id ?? null);
  const [cron, setCron] = useState(schedule?.cron ?? cronOf(DEFAULT_BUILDER)!);
  const [builder, setBuilder] = useState<Builder>(() => (schedule ? builderOf(schedule.cron, DEFAULT_BUILDER) : DEFAULT_BUILDER));
  const [timezone, setTimezone] = useState<string>(schedule?.timezone ?? browserZone());
  const [parameters, setParameters] = useState<unknown>(schedule?.parameters ?? {});
  const [channelIds, setChannelIds] = useState<string[]>(schedule?.channelIds ?? []);
  const [outputs, setOutputs] = useState<string[]>(schedule?.outputs ?? []);
  const [catchup, setCatchup] = useState<number>(schedule?.catchupWindowMinutes ?? 60);
  const [active, setActive] = useState(schedule ? schedule.status === 'active' : true);
  // The builder writes the expression; a typed expression sets the builder to the preset it is (or Custom).
  // From the builder as it is now, not as this render saw it: two changes before a render both count.
  const build = (patch: Partial<Builder>) =>
    setBuilder((current) => {
      const next = { ...current, ...patch };
      const written = cronOf(next);
      if (written) setCron(written);
      return next;
    });
  const type = (text: string) => {
    setCron(text);
    setBuilder(builderOf(text, builder));
  };
  const [checked] = useDebouncedValue({ cron, timezone }, 300);
  const check = useQuery({
    queryKey: ['reporting-cron-check', team?.id, checked.cron, checked.timezone],
    queryFn: () => call(api.POST('/api/reporting/schedules/validate', { body: { cron: checked.cron, timezone: checked.timezone, count: 5 } })),
    enabled: !!team && canWrite && checked.cron.trim() !== '',
    placeholderData: (previous) => previous,
  });
  const report = reports.data?.data.find((r) => r.id === targetId);
  const formats = report ? [...new Set(report.outputs.map((o) => o.format))] : [];
  const save = useMutation({
    mutationFn: async () => {
      const body = {
        name,
        target: { type: targetType, id: targetId ?? '' },
        cron,
        timezone,
        ...(targetType === 'report' ? { parameters: (parameters ?? {}) as Record<string, never>, outputs: outputs.length > 0 ? (outputs as Array<'pdf' | 'excel' | 'csv'>) : null } : {}),
        channelIds,
        catchupWindowMinutes: catchup,
      };
      let saved = schedule
        ? await call(api.PATCH('/api/reporting/schedules/{id}', { params: { path: { id: schedule.id } }, body }))
        : await call(api.POST('/api/reporting/schedules', { body }));
      if ((saved.status === 'active') !== active) {
        saved = active
          ? await call(api.POST('/api/reporting/schedules/{id}/resume', { params: { path: { id: saved.id } }, body: {} }))
          : await call(api.POST('/api/reporting/schedules/{id}/pause', { params: { path: { id: saved.id } }, body: {} }));
      }
      return saved;
    },
    onSuccess: async (saved) => {
      await queries.invalidateQueries({ queryKey: ['reporting-schedules'] });
      queries.setQueryData(['reporting-schedule', team?.id, saved.id], saved);
      if (!schedule) void navigate(`/reporting/schedules/${saved.id}`, { replace: true });
    },
  });
  const trigger = useMutation({ mutationFn: triggerSchedule });
  const hh = builder.time;
  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/reporting/schedules" size="sm">
          Schedules
        </Anchor>
        <Title order={2}>{schedule ? schedule.name : 'New schedule'}</Title>
        {schedule && (
          <Group gap="xs">
            <StatusBadge status={schedule.status} />
            {schedule.lastRun?.runId && (
              <Text size="sm">
                Last run:{' '}
                <Anchor component={Link} to={`/reporting/runs/${schedule.lastRun.runId}`}>
                  {schedule.lastRun.status}
                </Anchor>
              </Text>
            )}
          </Group>
        )}
      </div>
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <ProblemAlert error={save.error} title="Not saved" />
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <TextInput label="Schedule name" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} readOnly={!canWrite} />
            <Group align="end" wrap="nowrap">
              <SegmentedControl
                aria-label="What it runs"
                value={targetType}
                onChange={(v) => {
                  setTargetType(v as 'report' | 'job');
                  setTargetId(null);
                }}
                data={[
                  { value: 'report', label: 'A report' },
                  { value: 'job', label: 'A job' },
                ]}
                disabled={!canWrite}
              />
              {targetType === 'report' ? (
                <Select
                  label="Report"
                  required
                  searchable
                  flex={1}
                  description="Published reports only"
                  data={(reports.data?.data ?? []).filter((r) => r.latestVersion > 0).map((r) => ({ value: r.id, label: r.name }))}
                  value={targetId}
                  onChange={setTargetId}
                  readOnly={!canWrite}
                />
              ) : (
                <Select label="Job" required searchable flex={1} data={(jobs.data?.data ?? []).map((j) => ({ value: j.id, label: j.name }))} value={targetId} onChange={setTargetId} readOnly={!canWrite} />
              )}
            </Group>
          </SimpleGrid>
          <Paper withBorder p="md" component="section" aria-label="When it runs">
            <Stack>
              <Title order={3} size="h4">
                When it runs
              </Title>
              <SegmentedControl aria-label="Repeat" value={builder.preset} onChange={(v) => build({ preset: v as Preset })} data={PRESETS} disabled={!canWrite} />
              <Group align="end">
                {['daily', 'weekdays', 'weekly', 'monthly'].includes(builder.preset) && (
                  <TextInput label="At (time)" placeholder="HH:MM" value={hh} onChange={(e) => build({ time: e.currentTarget.value })} readOnly={!canWrite} w={140} />
                )}
                {builder.preset === 'weekly' && (
                  <Select label="On (day of the week)" allowDeselect={false} data={DAYS.map((d, i) => ({ value: String(i), label: d }))} value={String(builder.dayOfWeek)} onChange={(v) => build({ dayOfWeek: Number(v ?? 1) })} readOnly={!canWrite} w={200} />
                )}
                {builder.preset === 'monthly' && (
                  <NumberInput label="On (day of the month)" min={1} max={28} value={builder.dayOfMonth} onChange={(v) => build({ dayOfMonth: Math.min(28, Math.max(1, Number(v) || 1)) })} readOnly={!canWrite} w={200} />
                )}
                {builder.preset === 'hourly' && <NumberInput label="At minute" min={0} max={59} value={builder.minute} onChange={(v) => build({ minute: Math.min(59, Math.max(0, Number(v) || 0)) })} readOnly={!canWrite} w={140} />}
                <TextInput
                  label="Cron expression"
                  description="minute hour day month weekday"
                  required
                  value={cron}
                  onChange={(e) => type(e.currentTarget.value)}
                  readOnly={!canWrite}
                  ff="monospace"
                  w={260}
                />
                <Select label="Time zone" required searchable allowDeselect={false} data={zones} value={timezone} onChange={(v) => setTimezone(v ?? 'UTC')} readOnly={!canWrite} w={260} limit={50} />
              </Group>
              <CronCheck check={check.data} error={check.error} loading={check.isFetching} timezone={checked.timezone} />
            </Stack>
          </Paper>
          {targetType === 'report' && (
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <JsonField label="Parameter values" description="The report parameters' values for every run, as a JSON object" value={parameters} onChange={setParameters} readOnly={!canWrite} />
              <Checkbox.Group label="Outputs" description="None ticked: every format of the report" value={outputs} onChange={setOutputs}>
                <Group mt="xs">
                  {formats.map((f) => (
                    <Checkbox key={f} value={f} label={f.toUpperCase()} disabled={!canWrite} />
                  ))}
                  {formats.length === 0 && <Text size="sm" c="dimmed">Choose a report first.</Text>}
                </Group>
              </Checkbox.Group>
            </SimpleGrid>
          )}
          <SimpleGrid cols={{ base: 1, md: 3 }}>
            <MultiSelect
              label="Channels"
              description="Where each run's files are delivered (recipients are the channels')"
              data={(channels.data?.data ?? []).map((c) => ({ value: c.id, label: `${c.name} (${c.kind})` }))}
              value={channelIds}
              onChange={setChannelIds}
              readOnly={!canWrite}
              searchable
            />
            <NumberInput label="Catch-up window (minutes)" description="Runs missed while the service was down still run within it" min={0} max={1440} value={catchup} onChange={(v) => setCatchup(Number(v) || 0)} readOnly={!canWrite} />
            <Switch label="Enabled" description="A disabled (paused) schedule does not run; Run now still does" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} disabled={!canWrite} mt="lg" />
          </SimpleGrid>
          {canWrite && (
            <Group>
              <Button type="submit" loading={save.isPending} disabled={!name.trim() || !targetId}>
                {schedule ? 'Save' : 'Create schedule'}
              </Button>
              {schedule && (
                <Button variant="default" onClick={() => trigger.mutate(schedule.id)} loading={trigger.isPending}>
                  Run now
                </Button>
              )}
            </Group>
          )}
          <ProblemAlert error={trigger.error} />
          <TriggeredNote triggered={trigger.data} />
          {schedule?.nextRunTimes && schedule.nextRunTimes.length > 0 && (
            <Text size="sm" c="dimmed">
              Temporal&apos;s next fire time for the saved schedule: {inZone(schedule.nextRunTimes[0], schedule.timezone)} ({schedule.timezone}).
              {schedule.missedRuns ? ` Missed runs: ${schedule.missedRuns}.` : ''} Created {when(schedule.createdAt)}.
            </Text>
          )}
        </Stack>
      </form>
    </Stack>
  );
}

type Check = components['schemas']['CronCheck'];

/** The expression in words, its problems, daylight-saving warnings and the next five fire times in the zone. */
function CronCheck({ check, error, loading, timezone }: { check: Check | undefined; error: Error | null; loading: boolean; timezone: string }) {
  return (
    <Stack gap="xs" aria-live="polite">
      <ProblemAlert error={error} />
      {check && !check.valid && (
        <Alert color="red" role="alert" title="Not a schedule this service runs">
          <List size="sm">
            {check.errors.map((e, i) => (
              <List.Item key={i}>{e.message}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      {check?.valid && (
        <>
          <Text size="sm" fw={500}>
            {check.description}
          </Text>
          {check.warnings.map((w) => (
            <Alert key={w.code} color="yellow" p="xs">
              {w.message}
            </Alert>
          ))}
          <Group gap="xs">
            <Text size="sm" fw={500} id="next-runs-title">
              Next runs ({check.timezone ?? timezone})
            </Text>
            {loading && <Loader size="xs" aria-label="Checking the schedule" />}
          </Group>
          <List size="sm" aria-label="Next runs">
            {check.nextRunTimes.map((at) => (
              <List.Item key={at}>
                <time dateTime={at}>{inZone(at, check.timezone ?? timezone)}</time>
              </List.Item>
            ))}
          </List>
        </>
      )}
    </Stack>
  );
}
