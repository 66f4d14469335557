import { AppShell, Burger, Button, Group, NavLink, Select, Text, Title } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import { Link, Outlet, useLocation } from 'react-router';
import { UserAvatar } from './avatar';
import { useSession } from './session';

const SECTIONS: Array<[string, string]> = [
  ['Templates', '/templates'],
  ['Documents', '/documents'],
  ['Flow', '/flow'],
  ['Approvals', '/approvals'],
  ['Reporting', '/reporting'],
  ['API keys', '/api-keys'],
  ['Team', '/team'],
  ['Usage', '/usage'],
  ['Settings', '/settings'],
];

/** The signed-in frame: header with the project switcher, the main navigation, the page. */
export function Shell() {
  const [opened, { toggle }] = useDisclosure();
  const { user, teams, team, switchTeam, signOut } = useSession();
  const location = useLocation();
  // On a phone's width "Sign out" moves into the menu, so the header fits 375 px.
  const narrow = useMediaQuery('(max-width: 48em)') ?? false;
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="lg">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="xs" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <Title order={1} size={narrow ? 'h4' : 'h3'}>
              Formwork
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <Select
              aria-label="Project"
              data={teams.map((t) => ({ value: t.id, label: t.name }))}
              value={team?.id ?? null}
              onChange={(id) => id && switchTeam(id)}
              allowDeselect={false}
              w={narrow ? 120 : 220}
            />
            {/* On a phone's width the picture stands for the address (its name says whose it is). */}
            <Group gap="xs" wrap="nowrap">
              <UserAvatar size="sm" alt="Your picture" />
              <Text size="sm" c="dimmed" visibleFrom="md">
                {user?.email}
              </Text>
            </Group>
            {!narrow && (
              <Button variant="subtle" onClick={() => void signOut()}>
                Sign out
              </Button>
            )}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="sm" aria-label="Main">
        {SECTIONS.map(([label, to]) => (
          <NavLink key={to} component={Link} to={to} label={label} active={location.pathname.startsWith(to)} onClick={() => opened && toggle()} />
        ))}
        {narrow && (
          <Button variant="subtle" justify="start" mt="sm" onClick={() => void signOut()}>
            Sign out
          </Button>
        )}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
