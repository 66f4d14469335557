import { Alert, Anchor, Button, Center, Group, Loader, Modal, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useParams, useSearchParams } from 'react-router';
import { api, must } from '../api';
import { useSession } from '../session';
import { AuthCard, type SignInState } from './SignIn';

/**
 * The pages the links in e-mails open (docs/web.md "Links in e-mails"): confirming the address,
 * choosing a new password, answering an invitation; and asking for the password-reset e-mail. Opening
 * one changes nothing (mail scanners open links too): the token is sent only by the person's click.
 */

function MissingToken() {
  return (
    <Alert color="red" role="alert" title="This link is incomplete">
      Open the link from the e-mail again, or copy all of it into the address bar.
    </Alert>
  );
}

/** The way on once a page is done: into the app when signed in, else to the sign-in page. */
function Onwards() {
  const { user } = useSession();
  return user ? (
    <Anchor component={Link} to="/templates">
      Continue to Formwork
    </Anchor>
  ) : (
    <Anchor component={Link} to="/sign-in">
      Sign in
    </Anchor>
  );
}

/** `/verify-email?token=…`: the button confirms the address (POST /api/auth/verify-email). */
export function VerifyEmailPage() {
  const token = useSearchParams()[0].get('token');
  const { user, reloadUser } = useSession();
  const confirm = useMutation({
    mutationFn: () => must(api.POST('/api/auth/verify-email', { body: { token: token ?? '' } })),
    // A signed-in page shows the address as confirmed at once (Settings, invitations).
    onSuccess: () => (user ? reloadUser() : undefined),
  });
  if (confirm.isSuccess) {
    return (
      <AuthCard title="E-mail address confirmed">
        <Stack>
          <Text role="status">Thank you: your e-mail address is confirmed.</Text>
          <Onwards />
        </Stack>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Confirm your e-mail address">
      <Stack>
        {!token ? (
          <MissingToken />
        ) : (
          <>
            <Text>Press the button to confirm that this e-mail address is yours.</Text>
            {confirm.error && (
              <Alert color="red" role="alert" title="Could not confirm your e-mail address">
                {confirm.error.message}. The link may have been used already or have expired: sign in and ask for a new confirmation e-mail in Settings.
              </Alert>
            )}
            <Button onClick={() => confirm.mutate()} loading={confirm.isPending}>
              Confirm my e-mail address
            </Button>
          </>
        )}
      </Stack>
    </AuthCard>
  );
}

/** `/forgot-password`: the address to send the reset link to (POST /api/auth/forgot-password). */
export function ForgotPasswordPage() {
  const state = (useLocation().state as SignInState | null) ?? {};
  const [email, setEmail] = useState(state.email ?? '');
  const send = useMutation({ mutationFn: () => must(api.POST('/api/auth/forgot-password', { body: { email } })) });
  return (
    <AuthCard title="Reset your password">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          send.mutate();
        }}
      >
        <Stack>
          {send.isSuccess ? (
            <Alert color="green" role="status" title="Look in your inbox">
              If {email} has an account, an e-mail with a link to choose a new password is on its way. The link works once.
            </Alert>
          ) : (
            <>
              <Text size="sm">Type the address you sign in with; we e-mail it a link to choose a new password.</Text>
              {send.error && (
                <Alert color="red" role="alert" title="Could not send the e-mail">
                  {send.error.message}
                </Alert>
              )}
              <TextInput label="Email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
              <Button type="submit" loading={send.isPending}>
                Send the link
              </Button>
            </>
          )}
          <Anchor component={Link} to="/sign-in" size="sm">
            Back to sign-in
          </Anchor>
        </Stack>
      </form>
    </AuthCard>
  );
}

/** `/reset-password?token=…`: the new password (POST /api/auth/reset-password), which signs out every session. */
export function ResetPasswordPage() {
  const token = useSearchParams()[0].get('token');
  const { user, signOut } = useSession();
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const reset = useMutation({
    mutationFn: () => must(api.POST('/api/auth/reset-password', { body: { token: token ?? '', newPassword: password } })),
    // Every session ended, this browser's too.
    onSuccess: () => (user ? signOut() : undefined),
  });
  if (reset.isSuccess) {
    return (
      <AuthCard title="Password changed">
        <Stack>
          <Text role="status">Your password has been changed and every session signed out. Sign in with the new password.</Text>
          <Anchor component={Link} to="/sign-in">
            Sign in
          </Anchor>
        </Stack>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Choose a new password">
      {!token ? (
        <MissingToken />
      ) : (
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            setMismatch(password !== again);
            if (password === again) reset.mutate();
          }}
        >
          <Stack>
            {mismatch && (
              <Alert color="red" role="alert">
                The two passwords do not match.
              </Alert>
            )}
            {reset.error && (
              <Alert color="red" role="alert" title="Could not reset your password">
                {reset.error.message}. The link may have been used already or have expired:{' '}
                <Anchor component={Link} to="/forgot-password">
                  ask for a new one
                </Anchor>
                .
              </Alert>
            )}
            <PasswordInput label="New password" description="At least 8 characters" autoComplete="new-password" required minLength={8} maxLength={200} value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
            <PasswordInput label="Repeat the new password" autoComplete="new-password" required minLength={8} maxLength={200} value={again} onChange={(e) => setAgain(e.currentTarget.value)} />
            <Text size="sm" c="dimmed">
              Setting a new password signs you out on every device.
            </Text>
            <Button type="submit" loading={reset.isPending}>
              Set new password
            </Button>
          </Stack>
        </form>
      )}
    </AuthCard>
  );
}

const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const article = (role: string) => (role === 'admin' ? 'an' : 'a');

/**
 * `/invitations/:id?token=…`: the invitation (GET /api/teams/invitations/:id with the link's token),
 * then "Accept" or "Decline" once signed in with the invited address (the token goes with the answer,
 * docs/identity.md "Proving the address"). Not signed in: sign in or up first, and back here.
 */
export function InvitationPage() {
  const id = useParams().id ?? '';
  const token = useSearchParams()[0].get('token');
  const location = useLocation();
  const { user, signOut, reloadTeams } = useSession();
  const [answered, setAnswered] = useState<'accepted' | 'declined'>();
  const [declining, { open: askDecline, close: keep }] = useDisclosure(false);
  const invitation = useQuery({
    queryKey: ['invitation-by-link', id, token],
    queryFn: () => must(api.GET('/api/teams/invitations/{id}', { params: { path: { id }, query: { token: token ?? '' } } })),
    enabled: !!token && !answered,
    refetchOnWindowFocus: false,
  });
  // Whether the address is confirmed, read afresh when the person comes back from the confirmation link.
  const me = useQuery({ queryKey: ['me', user?.id], queryFn: () => must(api.GET('/api/users/me')), enabled: !!user });
  const accept = useMutation({
    mutationFn: () => must(api.POST('/api/teams/invitations/{id}/accept', { params: { path: { id } }, body: { token: token ?? '' } })),
    onSuccess: async () => {
      setAnswered('accepted');
      await reloadTeams(invitation.data?.teamId);
    },
  });
  const decline = useMutation({
    mutationFn: () => must(api.POST('/api/teams/invitations/{id}/reject', { params: { path: { id } }, body: { token: token ?? '' } })),
    onSuccess: () => setAnswered('declined'),
  });
  const inv = invitation.data;

  if (answered && inv) {
    return (
      <AuthCard title={answered === 'accepted' ? `Welcome to ${inv.teamName}` : 'Invitation declined'}>
        <Stack>
          <Text role="status">{answered === 'accepted' ? `You are now ${article(inv.role)} ${inv.role} of ${inv.teamName}.` : `You declined the invitation to ${inv.teamName}.`}</Text>
          {answered === 'accepted' ? (
            <Anchor component={Link} to="/team">
              Open {inv.teamName}
            </Anchor>
          ) : (
            <Onwards />
          )}
        </Stack>
      </AuthCard>
    );
  }
  if (!token) {
    return (
      <AuthCard title="Invitation">
        <MissingToken />
      </AuthCard>
    );
  }
  if (invitation.error) {
    return (
      <AuthCard title="Invitation not found">
        <Stack>
          <Alert color="red" role="alert">
            This invitation link is invalid, has expired, or the invitation was already answered or withdrawn ({invitation.error.message}). Ask the project&apos;s owner for a new one.
          </Alert>
          <Onwards />
        </Stack>
      </AuthCard>
    );
  }
  if (!inv || user === undefined) {
    return (
      <Center mih="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  const here: SignInState = { from: `${location.pathname}${location.search}`, email: inv.email };
  const theirs = user && user.email.toLowerCase() === inv.email.toLowerCase();
  const verified = me.data?.emailVerified ?? user?.emailVerified;
  const error = accept.error ?? decline.error;
  return (
    <AuthCard title={`Join ${inv.teamName}`}>
      <Stack>
        <Text>
          {inv.invitedBy ?? 'Someone'} invites you to the Formwork project <strong>{inv.teamName}</strong> as {article(inv.role)} <strong>{inv.role}</strong>.
        </Text>
        <Text size="sm" c="dimmed">
          The invitation is for {inv.email} and works until {when(inv.expiresAt)}.
        </Text>
        {!user && (
          <>
            <Text>Sign in as {inv.email} to answer it. No account yet? Create one with this address.</Text>
            <Stack gap="xs">
              <Button component={Link} to="/sign-in" state={here}>
                Sign in to answer
              </Button>
              <Button component={Link} to="/sign-up" state={here} variant="default">
                Create an account
              </Button>
            </Stack>
          </>
        )}
        {user && !theirs && (
          <>
            <Alert color="orange" role="alert" title="This invitation is for another address">
              You are signed in as {user.email}. Sign out, then sign in as {inv.email} to answer it.
            </Alert>
            <Group>
              <Button variant="default" onClick={() => void signOut()}>
                Sign out
              </Button>
            </Group>
          </>
        )}
        {theirs && (
          <>
            {verified === false && (
              <Alert color="orange" role="alert" title="Confirm your e-mail address first">
                Joining needs a confirmed address: open the link in the confirmation e-mail sent to {inv.email}, then come back here.
              </Alert>
            )}
            {error && (
              <Alert color="red" role="alert">
                {error.message}
              </Alert>
            )}
            <Group>
              <Button onClick={() => accept.mutate()} loading={accept.isPending}>
                Accept
              </Button>
              <Button variant="default" color="red" onClick={askDecline} loading={decline.isPending}>
                Decline
              </Button>
            </Group>
          </>
        )}
      </Stack>
      <Modal opened={declining} onClose={keep} title={`Decline the invitation to ${inv.teamName}?`}>
        <Stack>
          <Text size="sm">The invitation is used up; to join later, ask for a new one.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={keep}>
              Keep it
            </Button>
            <Button
              color="red"
              onClick={() => {
                keep();
                decline.mutate();
              }}
            >
              Decline invitation
            </Button>
          </Group>
        </Stack>
      </Modal>
    </AuthCard>
  );
}
