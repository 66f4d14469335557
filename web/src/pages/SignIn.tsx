import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, Navigate, useLocation, useNavigate } from 'react-router';
import { api, COOKIE_SESSION, errorText } from '../api';
import { useSession } from '../session';

/** The card of the pages outside the signed-in frame: signing in and up, and the pages of e-mailed links. */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
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

/**
 * What a page that sends the person to sign in (or up) hands over: where to come back to (path and
 * query, e.g. an invitation's link) and the address to fill in.
 */
export interface SignInState {
  from?: string;
  email?: string;
}

/** Where to go once signed in: the page the person was sent away from, else the templates; and the address it suggests. */
function useSignInState(): { back: string; state: SignInState } {
  const state = (useLocation().state as SignInState | null) ?? {};
  return { back: state.from ?? '/templates', state };
}

export function SignInPage() {
  const { user, signedIn } = useSession();
  const navigate = useNavigate();
  const { back, state } = useSignInState();
  const [email, setEmail] = useState(state.email ?? '');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [pendingDeletion, setPendingDeletion] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (user) return <Navigate to={back} replace />;

  async function signIn() {
    setError(undefined);
    const { data, error: failure } = await api.POST('/api/auth/login', { headers: COOKIE_SESSION, body: { email, password, ...(needsCode ? { code } : {}) } });
    if (data) {
      await signedIn(data.user, data.accessToken, data.expiresIn);
      void navigate(back, { replace: true });
      return;
    }
    const body = failure as { code?: string } | undefined;
    if (body?.code === 'ERR_AUTH_012' && !needsCode) return setNeedsCode(true);
    // The account waits out its deletion's grace period: the right password may restore it.
    if (body?.code === 'ERR_USER_004') return setPendingDeletion(true);
    setError(errorText(failure));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setPendingDeletion(false);
    await signIn();
    setBusy(false);
  }

  /** POST /api/auth/restore-account with the address and password typed, then signing in with them. */
  async function restore() {
    setBusy(true);
    setError(undefined);
    const { error: failure } = await api.POST('/api/auth/restore-account', { body: { email, password } });
    if (failure === undefined) {
      setPendingDeletion(false);
      await signIn();
    } else setError(errorText(failure));
    setBusy(false);
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
          {pendingDeletion && (
            <Alert color="orange" role="alert" title="This account is about to be deleted">
              <Stack gap="xs" align="start">
                <Text size="sm">
                  You asked for it to be deleted, and it is removed when the grace period ends. Until then everything in it is still there, and you can restore it with this address and
                  password.
                </Text>
                <Button size="xs" color="orange" onClick={() => void restore()} loading={busy}>
                  Restore my account
                </Button>
              </Stack>
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
            <Anchor component={Link} to="/forgot-password" state={{ email }}>
              Forgot your password?
            </Anchor>
          </Text>
          <Text size="sm">
            New here?{' '}
            <Anchor component={Link} to="/sign-up" state={{ ...state, email: email || state.email }}>
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
  const { back, state } = useSignInState();
  const [name, setName] = useState('');
  const [email, setEmail] = useState(state.email ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (user) return <Navigate to={back} replace />;

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
    void navigate(back, { replace: true });
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
            <Anchor component={Link} to="/sign-in" state={state}>
              Sign in
            </Anchor>
          </Text>
        </Stack>
      </form>
    </AuthCard>
  );
}
