import { Alert, Anchor, Badge, Button, Checkbox, Code, Group, Modal, Pagination, Paper, Select, SimpleGrid, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { components } from '@formwork/client';
import { api, errorText, must } from '../api';
import { useSession } from '../session';
import { Failure, ShownOnce } from './controls';

type Subscription = components['schemas']['WebhookSubscription'];
type Delivery = components['schemas']['WebhookDelivery'];
type EventType = 'document.generated' | 'document.failed' | 'batch.completed';

const EVENTS: Array<{ value: EventType; description: string }> = [
  { value: 'document.generated', description: 'a document is ready, with its download link' },
  { value: 'document.failed', description: 'a document could not be made, with why' },
  { value: 'batch.completed', description: 'every document of a batch has ended, with the counts' },
];

const DELIVERY_PAGE = 10;

/** A delivery's status as a word a person reads (docs/webhooks.md "Delivery records"). */
function deliveryStatus(d: Pick<Delivery, 'status' | 'nextAttemptAt'>): { word: string; colour: string } {
  switch (d.status) {
    case 'completed':
      return { word: 'Delivered', colour: 'green' };
    case 'failed':
      return { word: 'Failed', colour: 'red' };
    case 'delivering':
      return d.nextAttemptAt ? { word: `Retrying at ${new Date(d.nextAttemptAt).toLocaleTimeString()}`, colour: 'yellow' } : { word: 'Sending', colour: 'blue' };
    default:
      return { word: 'Waiting to send', colour: 'gray' };
  }
}

const lastStatusCode = (d: Delivery) => d.attempts.at(-1)?.statusCode ?? null;

/**
 * The project's webhook subscriptions (reached from Documents): create (the signing secret shown
 * once), edit, pause, delete, send a test; each one's delivery log with every attempt, and re-send.
 * Project admins and the owner only, as the API says (docs/webhooks.md).
 */
export function WebhooksPage() {
  const { team } = useSession();
  const isAdmin = team?.role === 'admin' || team?.role === 'owner';
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<Subscription>();
  const [deleting, setDeleting] = useState<Subscription>();
  const [chosen, setChosen] = useState<string>();
  const subscriptions = useQuery({
    queryKey: ['webhooks', team?.id, page],
    queryFn: () => must(api.GET('/api/webhooks', { params: { query: { page, limit: 20 } } })),
    enabled: !!team && isAdmin,
  });
  const test = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/webhooks/{id}/test', { params: { path: { id } } })),
    onSuccess: (_, id) => {
      setChosen(id);
      return queries.invalidateQueries({ queryKey: ['webhook-deliveries', id] });
    },
  });
  const header = (
    <Group justify="space-between">
      <div>
        <Anchor component={Link} to="/documents" size="sm">
          Documents
        </Anchor>
        <Title order={2}>Webhooks</Title>
      </div>
      {isAdmin && <CreateSubscription onCreated={(id) => setChosen(id)} />}
    </Group>
  );
  if (!isAdmin) {
    return (
      <Stack>
        {header}
        <Text c="dimmed">Only the project&apos;s admins and owner manage its webhooks.</Text>
      </Stack>
    );
  }
  const list = subscriptions.data?.data ?? [];
  const selected = list.find((s) => s.id === chosen);
  return (
    <Stack>
      {header}
      <Text size="sm" c="dimmed">
        Formwork POSTs signed JSON to these URLs when documents are ready or fail, and when a batch ends.
      </Text>
      {(subscriptions.error ?? test.error) && (
        <Alert color="red" role="alert">
          {(subscriptions.error ?? test.error)?.message}
        </Alert>
      )}
      {subscriptions.data && list.length === 0 && <Text c="dimmed">No webhooks yet.</Text>}
      {list.length > 0 && (
        <Table aria-label="Webhook subscriptions">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>URL</Table.Th>
              <Table.Th>Events</Table.Th>
              <Table.Th w={90}>State</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((s) => (
              <Table.Tr key={s.id} aria-selected={s.id === chosen}>
                <Table.Td>
                  <Text size="sm" style={{ wordBreak: 'break-all' }}>
                    {s.url}
                  </Text>
                  {s.description && (
                    <Text size="xs" c="dimmed">
                      {s.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{s.events.join(', ')}</Text>
                </Table.Td>
                <Table.Td>{s.isActive ? <Badge color="green">active</Badge> : <Badge color="gray">paused</Badge>}</Table.Td>
                <Table.Td>{new Date(s.createdAt).toLocaleString()}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button size="compact-sm" variant={s.id === chosen ? 'filled' : 'default'} aria-label={`Deliveries of ${s.url}`} onClick={() => setChosen(s.id)}>
                      Deliveries
                    </Button>
                    <Button size="compact-sm" variant="default" aria-label={`Send a test to ${s.url}`} disabled={!s.isActive} loading={test.isPending && test.variables === s.id} onClick={() => test.mutate(s.id)}>
                      Send a test
                    </Button>
                    <Button size="compact-sm" variant="default" aria-label={`Edit ${s.url}`} onClick={() => setEditing(s)}>
                      Edit
                    </Button>
                    <Button size="compact-sm" variant="light" color="red" aria-label={`Delete ${s.url}`} onClick={() => setDeleting(s)}>
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {subscriptions.data && subscriptions.data.meta && subscriptions.data.meta.totalPages > 1 && (
        <Pagination total={subscriptions.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of webhooks" />
      )}
      {selected && <DeliveryLog key={selected.id} subscription={selected} />}
      {editing && <EditSubscription subscription={editing} onClose={() => setEditing(undefined)} />}
      {deleting && (
        <DeleteSubscription
          subscription={deleting}
          onClose={(deleted) => {
            if (deleted && chosen === deleting.id) setChosen(undefined);
            setDeleting(undefined);
          }}
        />
      )}
    </Stack>
  );
}

/** The event checkboxes of the create and edit forms. */
function EventChoices({ value, onChange }: { value: EventType[]; onChange: (events: EventType[]) => void }) {
  return (
    <Checkbox.Group label="Events" description="What is sent to the URL" value={value} onChange={(v) => onChange(v as EventType[])} withAsterisk>
      <Stack gap="xs" mt="xs">
        {EVENTS.map((e) => (
          <Checkbox key={e.value} value={e.value} label={e.value} description={e.description} />
        ))}
      </Stack>
    </Checkbox.Group>
  );
}

function CreateSubscription({ onCreated }: { onCreated: (id: string) => void }) {
  const [opened, setOpened] = useState(false);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventType[]>(['document.generated', 'document.failed']);
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/webhooks', { body: { url, events, ...(description.trim() ? { description } : {}) } })),
    onSuccess: (created) => {
      onCreated(created.id);
      return queries.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  const done = () => {
    setOpened(false);
    create.reset();
    setUrl('');
    setDescription('');
    setEvents(['document.generated', 'document.failed']);
  };
  return (
    <>
      <Button onClick={() => setOpened(true)}>New webhook</Button>
      <Modal opened={opened} onClose={done} title="New webhook" size="lg">
        {create.data ? (
          <Stack>
            <Text>
              Your endpoint checks each request&apos;s <Code>X-Service-Signature</Code> with this signing secret. This is the only time it is shown:
              copy it now and keep it with the endpoint.
            </Text>
            <ShownOnce label="Signing secret" value={create.data.secret} />
            <Group>
              <Button variant="default" onClick={done}>
                Done
              </Button>
            </Group>
          </Stack>
        ) : (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              create.mutate();
            }}
          >
            <Stack>
              <Failure error={create.error} />
              <TextInput label="URL" description="Where the events are POSTed (http or https)" placeholder="https://example.com/hooks/formwork" required type="url" value={url} onChange={(e) => setUrl(e.currentTarget.value)} data-autofocus />
              <TextInput label="Description" description="Optional: what receives them" maxLength={500} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
              <EventChoices value={events} onChange={setEvents} />
              <Text size="sm" c="dimmed">
                Formwork makes the signing secret and shows it once, after creating.
              </Text>
              <Button type="submit" loading={create.isPending} disabled={events.length === 0}>
                Create
              </Button>
            </Stack>
          </form>
        )}
      </Modal>
    </>
  );
}

function EditSubscription({ subscription, onClose }: { subscription: Subscription; onClose: () => void }) {
  const [url, setUrl] = useState(subscription.url);
  const [description, setDescription] = useState(subscription.description ?? '');
  const [events, setEvents] = useState<EventType[]>(subscription.events as EventType[]);
  const [isActive, setActive] = useState(subscription.isActive);
  const queries = useQueryClient();
  const save = useMutation({
    mutationFn: () => must(api.PATCH('/api/webhooks/{id}', { params: { path: { id: subscription.id } }, body: { url, events, description: description.trim() || null, isActive } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['webhooks'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title="Edit webhook" size="lg">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Stack>
          <Failure error={save.error} />
          <TextInput label="URL" required type="url" value={url} onChange={(e) => setUrl(e.currentTarget.value)} />
          <TextInput label="Description" maxLength={500} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <EventChoices value={events} onChange={setEvents} />
          <Switch label="Active" aria-label="Active" description="A paused webhook is sent nothing" checked={isActive} onChange={(e) => setActive(e.currentTarget.checked)} />
          <Text size="sm" c="dimmed">
            The signing secret stays as it is; it is not shown again.
          </Text>
          <Group>
            <Button type="submit" loading={save.isPending} disabled={events.length === 0}>
              Save
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

function DeleteSubscription({ subscription, onClose }: { subscription: Subscription; onClose: (deleted: boolean) => void }) {
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: async () => {
      const { error, response } = await api.DELETE('/api/webhooks/{id}', { params: { path: { id: subscription.id } } });
      if (error !== undefined || !response.ok) throw new Error(errorText(error));
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['webhooks'] });
      onClose(true);
    },
  });
  return (
    <Modal opened onClose={() => onClose(false)} title="Delete the webhook?">
      <Stack>
        <Text>
          <Code style={{ wordBreak: 'break-all' }}>{subscription.url}</Code> will be sent nothing more, retries waiting for it end, and its delivery log goes with it.
        </Text>
        <Failure error={remove.error} />
        <Group>
          <Button color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
            Delete
          </Button>
          <Button variant="default" onClick={() => onClose(false)}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** A subscription's deliveries, newest first, followed while any is on its way. */
function DeliveryLog({ subscription }: { subscription: Subscription }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<Delivery['status'] | null>(null);
  const [open, setOpen] = useState<string>();
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', subscription.id, page, status],
    queryFn: () =>
      must(api.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: subscription.id }, query: { page, limit: DELIVERY_PAGE, ...(status ? { status } : {}) } } })),
    refetchInterval: (query) => (query.state.data?.data.some((d) => d.status === 'pending' || d.status === 'delivering') ? 1000 : 5000),
  });
  const list = deliveries.data?.data ?? [];
  const totalPages = deliveries.data?.meta?.totalPages ?? 1;
  return (
    <Paper withBorder p="md" component="section" aria-label="Deliveries">
      <Stack>
        <Group justify="space-between" align="end">
          <div>
            <Title order={3} size="h4">
              Deliveries
            </Title>
            <Text size="sm" c="dimmed" style={{ wordBreak: 'break-all' }}>
              to {subscription.url}
            </Text>
          </div>
          <Select
            label="Delivery status"
            placeholder="Any"
            clearable
            data={[
              { value: 'pending', label: 'Waiting to send' },
              { value: 'delivering', label: 'Sending or retrying' },
              { value: 'completed', label: 'Delivered' },
              { value: 'failed', label: 'Failed' },
            ]}
            value={status}
            onChange={(v) => {
              setStatus(v as Delivery['status'] | null);
              setPage(1);
            }}
            w={220}
          />
        </Group>
        <Failure error={deliveries.error} />
        {deliveries.data && list.length === 0 && <Text c="dimmed">Nothing sent yet. &quot;Send a test&quot; sends a test event.</Text>}
        {list.length > 0 && (
          <Table aria-label="Delivery log">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>HTTP status</Table.Th>
                <Table.Th>Attempts</Table.Th>
                <Table.Th>Time</Table.Th>
                <Table.Th>Details</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((d) => {
                const shown = deliveryStatus(d);
                return (
                  <Table.Tr key={d.id}>
                    <Table.Td>{d.eventType}</Table.Td>
                    <Table.Td>
                      <Badge color={shown.colour} variant="light">
                        {shown.word}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{lastStatusCode(d) ?? '—'}</Table.Td>
                    <Table.Td>{d.attempts.length}</Table.Td>
                    <Table.Td>{new Date(d.createdAt).toLocaleString()}</Table.Td>
                    <Table.Td>
                      <Button size="compact-sm" variant="default" aria-label={`Details of ${d.eventType}`} onClick={() => setOpen(d.id)}>
                        Details
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
        {totalPages > 1 && <Pagination total={totalPages} value={page} onChange={setPage} aria-label="Pages of deliveries" />}
      </Stack>
      {open && <DeliveryDetail deliveryId={open} onClose={() => setOpen(undefined)} />}
    </Paper>
  );
}

/** One delivery: every attempt, the body sent, and "Re-send" for a failed one. */
function DeliveryDetail({ deliveryId, onClose }: { deliveryId: string; onClose: () => void }) {
  const queries = useQueryClient();
  const delivery = useQuery({
    queryKey: ['webhook-delivery', deliveryId],
    queryFn: () => must(api.GET('/api/webhooks/deliveries/{deliveryId}', { params: { path: { deliveryId } } })),
    refetchInterval: (query) => (query.state.data && (query.state.data.status === 'pending' || query.state.data.status === 'delivering') ? 1000 : false),
  });
  const resend = useMutation({
    mutationFn: () => must(api.POST('/api/webhooks/deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } })),
    onSuccess: () => Promise.all([queries.invalidateQueries({ queryKey: ['webhook-delivery', deliveryId] }), queries.invalidateQueries({ queryKey: ['webhook-deliveries'] })]),
  });
  const d = delivery.data;
  const shown = d && deliveryStatus(d);
  return (
    <Modal opened onClose={onClose} title="Delivery" size="xl">
      <Failure error={delivery.error} />
      {d && shown && (
        <Stack>
          <Group>
            <Badge color={shown.colour} variant="light">
              {shown.word}
            </Badge>
            <Text size="sm">{d.eventType}</Text>
          </Group>
          <SimpleGrid cols={2} spacing="xs" component="dl">
            <Text component="dt" fw={500}>Event id</Text>
            <Text component="dd" size="sm"><Code>{d.eventId}</Code></Text>
            <Text component="dt" fw={500}>Sent to</Text>
            <Text component="dd" size="sm" style={{ wordBreak: 'break-all' }}>{d.url}</Text>
            <Text component="dt" fw={500}>Created</Text>
            <Text component="dd" size="sm">{new Date(d.createdAt).toLocaleString()}</Text>
            <Text component="dt" fw={500}>Ended</Text>
            <Text component="dd" size="sm">{d.completedAt ? new Date(d.completedAt).toLocaleString() : '—'}</Text>
            {d.nextAttemptAt && (
              <>
                <Text component="dt" fw={500}>Next attempt</Text>
                <Text component="dd" size="sm">{new Date(d.nextAttemptAt).toLocaleString()}</Text>
              </>
            )}
          </SimpleGrid>
          <Table aria-label="Attempts">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Attempt</Table.Th>
                <Table.Th>Time</Table.Th>
                <Table.Th>HTTP status</Table.Th>
                <Table.Th>Error</Table.Th>
                <Table.Th>Duration</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {d.attempts.length === 0 && (
                <Table.Tr>
                  <Table.Td colSpan={5}>
                    <Text size="sm" c="dimmed">No attempt yet.</Text>
                  </Table.Td>
                </Table.Tr>
              )}
              {d.attempts.map((a) => (
                <Table.Tr key={a.number}>
                  <Table.Td>{a.number}</Table.Td>
                  <Table.Td>{new Date(a.at).toLocaleString()}</Table.Td>
                  <Table.Td>{a.statusCode ?? 'no answer'}</Table.Td>
                  <Table.Td>
                    <Text size="sm" c={a.error ? 'red' : undefined} style={{ wordBreak: 'break-word' }}>
                      {a.error ?? 'none'}
                    </Text>
                  </Table.Td>
                  <Table.Td>{a.durationMs} ms</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <div>
            <Text fw={500} size="sm">
              Body sent
            </Text>
            <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
              {JSON.stringify(d.payload, null, 2)}
            </Code>
          </div>
          <Failure error={resend.error} />
          {d.status === 'failed' && (
            <Group>
              <Button onClick={() => resend.mutate()} loading={resend.isPending}>
                Re-send
              </Button>
              <Text size="sm" c="dimmed">
                to the webhook&apos;s URL and secret as they are now
              </Text>
            </Group>
          )}
        </Stack>
      )}
    </Modal>
  );
}
