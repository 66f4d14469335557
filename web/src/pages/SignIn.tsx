import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, Navigate, useLocation, useNavigate } from 'react-router';
import { api, COOKIE_SESSION, errorText } from '../api';
import { useSession } from '../session';

function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Center mih="100vh" bg="gray.0">
      <Paper component="main" withBorder shadow="sm" p="xl" w={400} radius="md">
        <Title order={1} size="h2" mb="lg">
          {title}
        </Title>
        {children}
      </Paper>
    </Center>
  );
}

/** Where to go once signed in: the page the person was sent away from, else the templates. */
function useReturnPath(): string {
  const location = useLocation();
  return (location.state as { from?: string } | null)?.from ?? '/templates';
}

export function SignInPage() {
  const { user, signedIn } = useSession();
  const navigate = useNavigate();
  const back = useReturnPath();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (user) return <Navigate to={back} replace />;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const { data, error: failure } = await api.POST('/api/auth/login', { headers: COOKIE_SESSION, body: { email, password, ...(needsCode ? { code } : {}) } });
    setBusy(false);
    if (data) {
      await signedIn(data.user, data.accessToken, data.expiresIn);
      void navigate(back, { replace: true });
      return;
    }
    const body = failure as { code?: string; relatedInfo?: { field?: string } };
    if (body?.code === 'ERR_AUTH_012' && !needsCode) {
      setNeedsCode(true);
      return;
    }
    setError(errorText(failure));
  }

  return (
    <AuthCard title="Sign in to Formwork">
      <form onSubmit={(e) => void submit(e)}>
        <Stack>
          {error && (
            <Alert color="red" role="alert" title="Could not sign in">
              {error}
            </Alert>
          )}
          <TextInput label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
          {needsCode && (
            <TextInput
              label="Authentication code"
              description="The six digits your authenticator app shows, or a backup code"
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              autoFocus
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
            />
          )}
          <Button type="submit" loading={busy}>
            Sign in
          </Button>
          <Text size="sm">
            New here?{' '}
            <Anchor component={Link} to="/sign-up">
              Create an account
            </Anchor>
          </Text>
        </Stack>
      </form>
    </AuthCard>
  );
}

export function SignUpPage() {
  const { user, signedIn } = useSession();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (user) return <Navigate to="/templates" replace />;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const { data, error: failure } = await api.POST('/api/auth/signup', { headers: COOKIE_SESSION, body: { name, email, password } });
    setBusy(false);
    if (!data) {
      setError(errorText(failure));
      return;
    }
    await signedIn(data.user, data.accessToken, data.expiresIn);
    void navigate('/templates', { replace: true });
  }

  return (
    <AuthCard title="Create your Formwork account">
      <form onSubmit={(e) => void submit(e)}>
        <Stack>
          {error && (
            <Alert color="red" role="alert" title="Could not create the account">
              {error}
            </Alert>
          )}
          <TextInput label="Name" autoComplete="name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <PasswordInput label="Password" description="At least 8 characters" autoComplete="new-password" required minLength={8} value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
          <Button type="submit" loading={busy}>
            Create account
          </Button>
          <Text size="sm">
            Have an account?{' '}
            <Anchor component={Link} to="/sign-in">
              Sign in
            </Anchor>
          </Text>
        </Stack>
      </form>
    </AuthCard>
  );
}
