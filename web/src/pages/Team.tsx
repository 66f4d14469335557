import { Alert, Badge, Button, Group, Modal, NativeSelect, Paper, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import type { components } from '@formwork/client';
import { api, must } from '../api';
import { EmbedOrigins } from '../embed/EmbedOrigins';
import { useSession } from '../session';
import { ConfirmButton, Failure, Pager, when } from './controls';
import { SigningCertificates } from './SigningCertificates';

type Member = components['schemas']['Member'];
type Invitation = components['schemas']['Invitation'];
type MyInvitation = components['schemas']['MyInvitation'];
type Activity = components['schemas']['ActivityEntry'];

const ROLES = [
  { value: 'admin', label: 'Admin' },
  { value: 'member', label: 'Member' },
  { value: 'viewer', label: 'Viewer' },
];
const ROLE_HELP = 'Admins do everything but delete the project; members make templates and documents; viewers only read.';

/**
 * The active project (docs/web.md "Team"): its settings, members and their roles, invitations sent and
 * received, and its activity. The controls follow the caller's role as the API decides it: any member
 * reads; owners and admins invite and see pending invitations; the owner renames, deletes, changes
 * roles, removes members and cancels invitations.
 */
export function TeamPage() {
  const { team, reloadTeams } = useSession();
  // The role may have changed since sign-in (the owner re-roled the person): read it afresh.
  useEffect(() => {
    void reloadTeams();
  }, [reloadTeams]);
  return (
    <Stack>
      <Title order={2}>Team: {team?.name}</Title>
      <InvitationsToYou />
      {team && (
        <>
          <ProjectSettings />
          <Members />
          <EmbedOrigins />
          <SigningCertificates />
          {(team.role === 'owner' || team.role === 'admin') && <PendingInvitations />}
          <ActivityFeed />
        </>
      )}
    </Stack>
  );
}

function useRole() {
  const { team } = useSession();
  return { isOwner: team?.role === 'owner', isAdmin: team?.role === 'owner' || team?.role === 'admin' };
}

function ProjectSettings() {
  const { team, reloadTeams } = useSession();
  const { isOwner } = useRole();
  const queries = useQueryClient();
  const project = useQuery({ queryKey: ['team', team?.id], queryFn: () => must(api.GET('/api/teams/{id}', { params: { path: { id: team!.id } } })) });
  const [name, setName] = useState<string>();
  const rename = useMutation({
    mutationFn: () => must(api.PUT('/api/teams/{id}', { params: { path: { id: team!.id } }, body: { name: name ?? '' } })),
    onSuccess: async () => {
      setName(undefined);
      await queries.invalidateQueries({ queryKey: ['team'] });
      await queries.invalidateQueries({ queryKey: ['activity'] });
      await reloadTeams();
    },
  });
  const remove = useMutation({
    mutationFn: () => must(api.DELETE('/api/teams/{id}', { params: { path: { id: team!.id } } })),
    onSuccess: () => reloadTeams(),
  });
  const p = project.data;
  return (
    <Paper withBorder p="md" component="section" aria-label="Project">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Project
          </Title>
          <NewProject />
        </Group>
        <Failure error={project.error} />
        {p && (
          <Text size="sm">
            {p.isPersonal ? 'Your personal project' : 'A team project'} · {p.memberCount} member{p.memberCount === 1 ? '' : 's'} · address <code>{p.slug}</code> · your role: <b>{p.role}</b>
          </Text>
        )}
        {isOwner && p && (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              rename.mutate();
            }}
          >
            <Group align="end">
              <TextInput label="Project name" required maxLength={100} value={name ?? p.name} onChange={(e) => setName(e.currentTarget.value)} w={320} />
              <Button type="submit" variant="default" loading={rename.isPending} disabled={name === undefined || name.trim() === p.name}>
                Rename
              </Button>
              {!p.isPersonal && (
                <ConfirmButton
                  label="Delete project"
                  name="Delete project"
                  size="sm"
                  title={`Delete ${p.name}?`}
                  confirm="Delete project"
                  onConfirm={() => remove.mutate()}
                >
                  The project leaves every member&apos;s list, its pending invitations are cancelled and its API keys stop working.
                </ConfirmButton>
              )}
            </Group>
          </form>
        )}
        {(rename.error ?? remove.error) && <Alert color="red" role="alert">{(rename.error ?? remove.error)?.message}</Alert>}
        {rename.isSuccess && <Text role="status" size="sm" c="green">Project renamed</Text>}
      </Stack>
    </Paper>
  );
}

function NewProject() {
  const { reloadTeams } = useSession();
  const [opened, { open, close }] = useDisclosure(false);
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/teams', { body: { name } })),
    onSuccess: async (created) => {
      close();
      setName('');
      await reloadTeams(created.id);
    },
  });
  return (
    <>
      <Button variant="default" size="xs" onClick={open}>
        New project
      </Button>
      <Modal opened={opened} onClose={close} title="New project">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Stack>
            <Text size="sm">A project of its own: templates, documents, keys and members. You are its owner, and the app switches to it.</Text>
            <TextInput label="Name" required maxLength={100} value={name} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            <Failure error={create.error} />
            <Button type="submit" loading={create.isPending}>
              Create project
            </Button>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

function Members() {
  const { team, user } = useSession();
  const { isOwner, isAdmin } = useRole();
  const queries = useQueryClient();
  const members = useQuery({ queryKey: ['members', team?.id], queryFn: () => must(api.GET('/api/teams/members')) });
  const changed = async () => {
    await queries.invalidateQueries({ queryKey: ['members'] });
    await queries.invalidateQueries({ queryKey: ['activity'] });
  };
  const role = useMutation({
    mutationFn: ({ id, role }: { id: string; role: 'admin' | 'member' | 'viewer' }) => must(api.PATCH('/api/teams/members/{id}/role', { params: { path: { id } }, body: { role } })),
    onSettled: changed,
  });
  const remove = useMutation({
    mutationFn: (id: string) => must(api.DELETE('/api/teams/members/{id}', { params: { path: { id } } })),
    onSettled: changed,
  });
  const list: Member[] = members.data?.data ?? [];
  const error = members.error ?? role.error ?? remove.error;
  return (
    <Paper withBorder p="md" component="section" aria-label="Members">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4">
            Members
          </Title>
          {isAdmin && <InviteMember />}
        </Group>
        {error && <Alert color="red" role="alert">{error.message}</Alert>}
        {role.isSuccess && <Text role="status" size="sm" c="green">{`${role.data.name} is now ${role.data.role === 'admin' ? 'an' : 'a'} ${role.data.role}`}</Text>}
        <Table aria-label="Members" verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Email</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Joined</Table.Th>
              {isOwner && <Table.Th>Actions</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{m.name}</Table.Td>
                <Table.Td>{m.email}</Table.Td>
                <Table.Td>
                  {isOwner && m.role !== 'owner' ? (
                    <NativeSelect
                      aria-label={`Role of ${m.name}`}
                      data={ROLES}
                      value={role.isPending && role.variables?.id === m.id ? role.variables.role : m.role}
                      size="xs"
                      w={120}
                      disabled={role.isPending && role.variables?.id === m.id}
                      onChange={(e) => role.mutate({ id: m.id, role: e.currentTarget.value as 'admin' | 'member' | 'viewer' })}
                    />
                  ) : (
                    <Badge variant="light" color={m.role === 'owner' ? 'grape' : 'gray'}>
                      {m.role}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>{new Date(m.joinedAt).toLocaleDateString()}</Table.Td>
                {isOwner && (
                  <Table.Td>
                    {m.id !== user?.id && m.role !== 'owner' && (
                      <ConfirmButton label="Remove" name={`Remove ${m.name}`} title={`Remove ${m.name} from ${team?.name}?`} confirm="Remove member" onConfirm={() => remove.mutate(m.id)}>
                        {m.name} ({m.email}) loses access at once, and so do the API keys they created in this project. You can invite them again later.
                      </ConfirmButton>
                    )}
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
    </Paper>
  );
}

function InviteMember() {
  const [opened, { open, close }] = useDisclosure(false);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string | null>('member');
  const queries = useQueryClient();
  const send = useMutation({
    mutationFn: () => must(api.POST('/api/teams/members/invite', { body: { email, role: (role ?? 'member') as 'admin' | 'member' | 'viewer' } })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['invitations'] });
      await queries.invalidateQueries({ queryKey: ['activity'] });
    },
  });
  const done = () => {
    close();
    send.reset();
    setEmail('');
    setRole('member');
  };
  return (
    <>
      <Button size="xs" onClick={open}>
        Invite a member
      </Button>
      <Modal opened={opened} onClose={done} title="Invite a member">
        {send.data ? (
          <Stack>
            <Text role="status">
              Invitation sent to {send.data.email} as {send.data.role}. It works until {when(send.data.expiresAt)}.
            </Text>
            <Button variant="default" onClick={done}>
              Done
            </Button>
          </Stack>
        ) : (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              send.mutate();
            }}
          >
            <Stack>
              <Text size="sm">They get an e-mail with a link, and accept it signed in with that address.</Text>
              <TextInput label="Email" type="email" required maxLength={254} value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus />
              <Select label="Role" description={ROLE_HELP} data={ROLES} value={role} onChange={setRole} allowDeselect={false} />
              <Failure error={send.error} />
              <Button type="submit" loading={send.isPending}>
                Send invitation
              </Button>
            </Stack>
          </form>
        )}
      </Modal>
    </>
  );
}

function PendingInvitations() {
  const { team } = useSession();
  const { isOwner } = useRole();
  const queries = useQueryClient();
  const invitations = useQuery({ queryKey: ['invitations', team?.id], queryFn: () => must(api.GET('/api/teams/invitations')) });
  const cancel = useMutation({
    mutationFn: (id: string) => must(api.DELETE('/api/teams/members/{id}/invitation', { params: { path: { id } } })),
    onSettled: async () => {
      await queries.invalidateQueries({ queryKey: ['invitations'] });
      await queries.invalidateQueries({ queryKey: ['activity'] });
    },
  });
  const list: Invitation[] = invitations.data?.data ?? [];
  const error = invitations.error ?? cancel.error;
  return (
    <Paper withBorder p="md" component="section" aria-label="Pending invitations">
      <Stack>
        <Title order={3} size="h4">
          Pending invitations
        </Title>
        {error && <Alert color="red" role="alert">{error.message}</Alert>}
        {invitations.data && list.length === 0 && (
          <Text size="sm" c="dimmed">
            No invitations are waiting for an answer.
          </Text>
        )}
        {list.length > 0 && (
          <Table aria-label="Pending invitations" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Works until</Table.Th>
                {isOwner && <Table.Th>Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((i) => (
                <Table.Tr key={i.id}>
                  <Table.Td>{i.email}</Table.Td>
                  <Table.Td>{i.role}</Table.Td>
                  <Table.Td>{when(i.expiresAt)}</Table.Td>
                  {isOwner && (
                    <Table.Td>
                      <Button size="compact-sm" variant="light" color="red" aria-label={`Cancel the invitation to ${i.email}`} loading={cancel.isPending && cancel.variables === i.id} onClick={() => cancel.mutate(i.id)}>
                        Cancel
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}

/**
 * Invitations addressed to the signed-in person, from any project. Accepting takes the token of the
 * e-mailed link (the API's rule, docs/identity.md "Proving the address"): the link opens the app's
 * invitation page (pages/AccountLinks.tsx), and here the person may paste it instead; declining needs
 * only the verified address.
 */
function InvitationsToYou() {
  const { user } = useSession();
  const mine = useQuery({ queryKey: ['my-invitations'], queryFn: () => must(api.GET('/api/teams/invitations/my')), enabled: !!user?.emailVerified });
  const list: MyInvitation[] = mine.data?.data ?? [];
  if (!user?.emailVerified) {
    return (
      <Text size="sm" c="dimmed">
        Confirm your e-mail address to see the invitations sent to it.
      </Text>
    );
  }
  if (!mine.error && list.length === 0) return null;
  return (
    <Paper withBorder p="md" component="section" aria-label="Invitations to you" bg="var(--mantine-color-blue-light)">
      <Stack>
        <Title order={3} size="h4">
          Invitations to you
        </Title>
        <Failure error={mine.error} />
        {list.map((i) => (
          <InvitationToYou key={i.id} invitation={i} />
        ))}
      </Stack>
    </Paper>
  );
}

function InvitationToYou({ invitation: i }: { invitation: MyInvitation }) {
  const { user, reloadTeams } = useSession();
  const queries = useQueryClient();
  const [opened, { open, close }] = useDisclosure(false);
  const [link, setLink] = useState('');
  const [problem, setProblem] = useState<string>();
  const accept = useMutation({
    mutationFn: (token: string) => must(api.POST('/api/teams/invitations/{id}/accept', { params: { path: { id: i.id } }, body: { token } })),
    onSuccess: async () => {
      close();
      await reloadTeams(i.teamId);
      await queries.invalidateQueries({ queryKey: ['my-invitations'] });
    },
  });
  const reject = useMutation({
    mutationFn: () => must(api.POST('/api/teams/invitations/{id}/reject', { params: { path: { id: i.id } }, body: {} })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['my-invitations'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const token = tokenOf(link, i.id);
    setProblem(token ? undefined : 'That is the link of another invitation.');
    if (token) accept.mutate(token);
  };
  return (
    <Group justify="space-between" wrap="nowrap" align="start">
      <div>
        <Text fw={600}>{i.teamName}</Text>
        <Text size="sm">
          {i.invitedBy ?? 'Someone'} invites you as {i.role === 'admin' ? 'an' : 'a'} {i.role}. The invitation works until {when(i.expiresAt)}.
        </Text>
        <Failure error={reject.error} />
      </div>
      <Group gap="xs" wrap="nowrap">
        <Button size="xs" aria-label={`Accept the invitation to ${i.teamName}`} onClick={open}>
          Accept
        </Button>
        <ConfirmButton label="Reject" name={`Reject the invitation to ${i.teamName}`} size="xs" title={`Reject the invitation to ${i.teamName}?`} confirm="Reject invitation" onConfirm={() => reject.mutate()}>
          The invitation is used up; to join later, ask for a new one.
        </ConfirmButton>
      </Group>
      <Modal opened={opened} onClose={close} title={`Join ${i.teamName}`}>
        <form onSubmit={submit}>
          <Stack>
            <Text size="sm">
              Opening the link in the invitation e-mail sent to {user?.email} answers it in one click. Or paste the link here: it proves the message reached you, and only then does the
              invitation let you in.
            </Text>
            <TextInput label="Invitation link" required value={link} onChange={(e) => setLink(e.currentTarget.value)} placeholder="https://…/invitations/…?token=…" data-autofocus />
            {(problem ?? accept.error) && <Alert color="red" role="alert">{problem ?? accept.error?.message}</Alert>}
            <Button type="submit" loading={accept.isPending}>
              Accept invitation
            </Button>
          </Stack>
        </form>
      </Modal>
    </Group>
  );
}

/** The token of an e-mailed invitation link (or a bare token); undefined for another invitation's link. */
function tokenOf(pasted: string, invitationId: string): string | undefined {
  const text = pasted.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  const id = /\/invitations\/([^/?#]+)/.exec(url.pathname)?.[1];
  if (id && id !== invitationId) return undefined;
  return url.searchParams.get('token') ?? text;
}

const PAGE = 20;

function ActivityFeed() {
  const { team } = useSession();
  const [page, setPage] = useState(1);
  const activity = useQuery({
    queryKey: ['activity', team?.id, page],
    queryFn: () => must(api.GET('/api/teams/activity', { params: { query: { page, limit: PAGE } } })),
  });
  const list: Activity[] = activity.data?.data ?? [];
  return (
    <Paper withBorder p="md" component="section" aria-label="Activity">
      <Stack>
        <Title order={3} size="h4">
          Activity
        </Title>
        <Failure error={activity.error} />
        {activity.data && list.length === 0 && (
          <Text size="sm" c="dimmed">
            Nothing has happened here yet.
          </Text>
        )}
        {list.length > 0 && (
          <Table aria-label="Activity" verticalSpacing={4}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>What</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((a, n) => (
                <Table.Tr key={`${a.timestamp}-${n}`}>
                  <Table.Td>
                    <Text size="sm" c="dimmed">
                      {when(a.timestamp)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" title={a.user?.email}>
                      {a.user?.name ?? 'A deleted account'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{describe(a)}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        <Pager meta={activity.data?.meta} onPage={setPage} previous="Newer" next="Older" of="the activity" />
      </Stack>
    </Paper>
  );
}

/** An entry in words (docs/identity.md "Activity" lists the types and their fields). */
function describe(a: Activity): string {
  const template = typeof a.template?.name === 'string' ? `the template “${a.template.name}”` : 'a template';
  switch (a.type) {
    case 'project_created':
      return `created the project “${a.project?.name ?? ''}”`;
    case 'project_updated': {
      const changes = (a.changes ?? {}) as { name?: string; slug?: string };
      return [changes.name && `renamed the project “${changes.name}”`, changes.slug && `set its address to ${changes.slug}`].filter(Boolean).join(' and ') || 'changed the project';
    }
    case 'invitation_sent':
      return `invited ${a.invitation?.email} as ${a.invitation?.role}`;
    case 'invitation_cancelled':
      return `cancelled the invitation to ${a.invitation?.email}`;
    case 'invitation_rejected':
      return `declined the invitation to ${a.invitation?.email}`;
    case 'member_joined':
      return `joined as ${a.role}`;
    case 'role_changed':
      return `changed the role of ${a.member?.name} (${a.member?.email}) from ${a.from} to ${a.to}`;
    case 'member_removed':
      return `removed ${a.member?.name} (${a.member?.email})`;
    case 'template_created':
      return `created ${template}`;
    case 'template_updated':
      return `changed ${template}`;
    case 'template_published':
      return `published ${template}${a.version ? `, version ${a.version}` : ''}`;
    case 'template_deleted':
      return `deleted ${template}`;
    default:
      return a.type.replaceAll('_', ' ');
  }
}
