import { Alert, Button, Code, CopyButton, Group, Image, List, Paper, PasswordInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, COOKIE_SESSION, errorText, must, setAccessToken } from '../api';
import { useSession } from '../session';
import { EmailPreferences, Profile, TwoFactorManagement, YourData } from './Account';
import { Failure } from './controls';

/** The signed-in person's account: profile, two-factor authentication, password, e-mail preferences, their data. */
export function SettingsPage() {
  const { user } = useSession();
  return (
    <Stack>
      <Title order={2}>Settings</Title>
      <Text>
        Signed in as {user?.name} ({user?.email}){user?.emailVerified ? '' : ': your e-mail address is not confirmed yet; the link is in your inbox.'}
      </Text>
      {user && !user.emailVerified && <ResendConfirmation />}
      <Profile />
      <TwoFactor />
      <TwoFactorManagement />
      <ChangePassword />
      <EmailPreferences />
      <YourData />
    </Stack>
  );
}

/** The confirmation e-mail once more (POST /api/auth/resend-verification; the API limits how often). */
function ResendConfirmation() {
  const resend = useMutation({ mutationFn: () => must(api.POST('/api/auth/resend-verification')) });
  return (
    <Group>
      <Button size="xs" variant="light" onClick={() => resend.mutate()} loading={resend.isPending}>
        Send the confirmation e-mail again
      </Button>
      {resend.isSuccess && (
        <Text size="sm" c="green" role="status">
          Sent: the new link is in your inbox.
        </Text>
      )}
      {resend.error && (
        <Text size="sm" c="red" role="alert">
          {resend.error.message}
        </Text>
      )}
    </Group>
  );
}

/** The session again after a call that replaced it (enabling 2FA, a new password end every other session). */
function useRenewedSession() {
  const { signedIn } = useSession();
  return async (tokens: { accessToken: string; expiresIn: number }) => {
    setAccessToken(tokens.accessToken);
    const { data: me } = await api.GET('/api/users/me');
    if (me) await signedIn(me as Parameters<typeof signedIn>[0], tokens.accessToken, tokens.expiresIn);
  };
}

function TwoFactor() {
  const { user } = useSession();
  const renew = useRenewedSession();
  const [code, setCode] = useState('');
  const setup = useMutation({ mutationFn: () => must(api.POST('/api/users/me/2fa/enable')) });
  const confirm = useMutation({
    mutationFn: () => must(api.POST('/api/users/me/2fa/verify', { headers: COOKIE_SESSION, body: { code } })),
    onSuccess: (tokens) => renew(tokens as unknown as { accessToken: string; expiresIn: number }),
  });
  const secret = setup.data as { qrCode?: string; secret?: string; backupCodes?: string[] } | undefined;
  return (
    <Paper withBorder p="md" component="section" aria-label="Two-factor authentication">
      <Stack>
        <Title order={3} size="h4">
          Two-factor authentication
        </Title>
        {user?.twoFactorEnabled ? (
          <Text>On: signing in asks for a code from your authenticator app (or a backup code).</Text>
        ) : !secret ? (
          <Group>
            <Text>Off.</Text>
            <Button variant="light" onClick={() => setup.mutate()} loading={setup.isPending}>
              Set up two-factor authentication
            </Button>
          </Group>
        ) : (
          <form
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              confirm.mutate();
            }}
          >
            <Stack>
              <Text>Scan the code with your authenticator app, or type the key, then enter the six digits it shows.</Text>
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <Image src={secret.qrCode} alt="QR code for your authenticator app" w={200} h={200} />
                <Stack gap="xs">
                  <Text size="sm">Key</Text>
                  <Code>{secret.secret}</Code>
                  <Text size="sm" mt="sm">
                    Backup codes (each works once, when your phone does not): keep them somewhere safe.
                  </Text>
                  <List size="sm" aria-label="Backup codes">
                    {secret.backupCodes?.map((c) => (
                      <List.Item key={c}>
                        <Code>{c}</Code>
                      </List.Item>
                    ))}
                  </List>
                  <CopyButton value={(secret.backupCodes ?? []).join('\n')}>
                    {({ copied, copy }) => (
                      <Button size="xs" variant="default" onClick={copy}>
                        {copied ? 'Copied' : 'Copy the backup codes'}
                      </Button>
                    )}
                  </CopyButton>
                </Stack>
              </SimpleGrid>
              <Failure error={confirm.error} />
              <TextInput label="Authentication code" autoComplete="one-time-code" inputMode="numeric" required value={code} onChange={(e) => setCode(e.currentTarget.value)} maw={240} />
              <Group>
                <Button type="submit" loading={confirm.isPending}>
                  Turn on
                </Button>
              </Group>
            </Stack>
          </form>
        )}
        <Failure error={setup.error} />
      </Stack>
    </Paper>
  );
}

function ChangePassword() {
  const renew = useRenewedSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const change = useMutation({
    mutationFn: async () => {
      const { data, error } = await api.POST('/api/users/me/change-password', { headers: COOKIE_SESSION, body: { currentPassword: current, newPassword: next } });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data as unknown as { accessToken: string; expiresIn: number };
    },
    onSuccess: async (tokens) => {
      await renew(tokens);
      setCurrent('');
      setNext('');
      setDone(true);
    },
  });
  return (
    <Paper withBorder p="md" component="section" aria-label="Password">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          setDone(false);
          change.mutate();
        }}
      >
        <Stack maw={360}>
          <Title order={3} size="h4">
            Password
          </Title>
          {done && (
            <Alert color="green" role="status">
              Password changed. Your other sessions were signed out.
            </Alert>
          )}
          <Failure error={change.error} />
          <PasswordInput label="Current password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.currentTarget.value)} />
          <PasswordInput label="New password" description="At least 8 characters" autoComplete="new-password" required minLength={8} value={next} onChange={(e) => setNext(e.currentTarget.value)} />
          <Group>
            <Button type="submit" loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
