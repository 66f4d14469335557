import { Stack, Text, Title } from '@mantine/core';
import { useSession } from '../session';

/** The signed-in person's account. */
export function SettingsPage() {
  const { user } = useSession();
  return (
    <Stack>
      <Title order={2}>Settings</Title>
      <Text>
        Signed in as {user?.name} ({user?.email}){user?.emailVerified ? '' : ': your e-mail address is not confirmed yet; the link is in your inbox.'}
      </Text>
      <Text>Two-factor authentication: {user?.twoFactorEnabled ? 'on' : 'off'}</Text>
    </Stack>
  );
}
