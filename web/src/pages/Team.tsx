import { Alert, Stack, Table, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api';
import { useSession } from '../session';

/** The project's members and their roles. */
export function TeamPage() {
  const { team } = useSession();
  const members = useQuery({ queryKey: ['members', team?.id], queryFn: () => must(api.GET('/api/teams/members')), enabled: !!team });
  const list = (members.data as { data?: Array<{ id: string; email: string; name: string; role: string }> } | undefined)?.data ?? [];
  return (
    <Stack>
      <Title order={2}>Team: {team?.name}</Title>
      {members.error && <Alert color="red" role="alert">{members.error.message}</Alert>}
      <Table aria-label="Members">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Email</Table.Th>
            <Table.Th>Role</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.map((m) => (
            <Table.Tr key={m.id}>
              <Table.Td>{m.name}</Table.Td>
              <Table.Td>{m.email}</Table.Td>
              <Table.Td>{m.role}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
