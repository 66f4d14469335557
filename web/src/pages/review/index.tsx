import { Alert, Anchor, Box, Button, Container, Group, Loader, Paper, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type FormEvent, type ReactNode } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { reviewApi, type ApiError, type LinkStatus, type ReviewApproval, type ReviewDetail } from './client';
import { localDateTime, timeZone } from './dates';
import { Summary, type FieldSchema } from './Summary';

const PdfPreview = lazy(() => import('../../preview/PdfPreview'));

/**
 * The reviewer's page (docs/web.md "The reviewer's page"): the approver's magic link, no account.
 * Opening the link changes nothing (mail scanners open links too): the page reads what became of the
 * link, and only the person's "Continue" (with the address the link was sent to) exchanges it for a
 * review session, kept in an HttpOnly cookie. Then the document, the summary, and the decision.
 */
export default function ReviewArea() {
  const token = useSearchParams()[0].get('token');
  return token ? <FromLink token={token} /> : <Session />;
}

function errorText(error: unknown): string {
  const body = error as Partial<ApiError> | undefined;
  if (body && typeof body.message === 'string') return body.code ? `${body.message} (${body.code})` : body.message;
  return 'Something went wrong; please try again.';
}

async function must<T>(call: Promise<{ data?: T; error?: unknown }>): Promise<T> {
  const { data, error } = await call;
  if (error !== undefined || data === undefined) throw new Error(errorText(error));
  return data;
}

function Frame({ title, children, wide }: { title: string; children: ReactNode; wide?: boolean }) {
  return (
    <Box bg="gray.0" mih="100vh" py={{ base: 'sm', sm: 'xl' }}>
      <Container component="main" size={wide ? 'md' : 'xs'} px={{ base: 'xs', sm: 'md' }}>
        <Text size="sm" c="dimmed" mb={4}>
          Formwork · review
        </Text>
        <Title order={1} size="h2" mb="md" style={{ overflowWrap: 'anywhere' }}>
          {title}
        </Title>
        {children}
      </Container>
    </Box>
  );
}

function Waiting() {
  return (
    <Frame title="Review">
      <Loader aria-label="Loading" />
    </Frame>
  );
}

/** `/review?token=…`: what the link can do, and the address it was sent to to go on. */
function FromLink({ token }: { token: string }) {
  const link = useQuery({ queryKey: ['review-link', token], queryFn: () => must(reviewApi.POST('/api/flow/review/link', { body: { token } })), retry: false, staleTime: Infinity });
  if (link.isPending) return <Waiting />;
  if (link.error) {
    return (
      <Frame title="Review">
        <Alert color="red" role="alert" title="The link could not be read">
          {link.error.message}
        </Alert>
      </Frame>
    );
  }
  return link.data.state === 'valid' ? <ConfirmEmail token={token} expiresAt={link.data.expiresAt} /> : <LinkProblem token={token} status={link.data} />;
}

function ConfirmEmail({ token, expiresAt }: { token: string; expiresAt: string | null }) {
  const [email, setEmail] = useState('');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const open = useMutation({
    mutationFn: () => must(reviewApi.POST('/api/flow/review/authenticate', { body: { token, email } })),
    onSuccess: async (data) => {
      await queryClient.invalidateQueries({ queryKey: ['review-inbox'] });
      // The link is used up: it leaves the address bar, and a reload keeps the session (the cookie).
      void navigate(`/review?approval=${encodeURIComponent(data.approvalId)}`, { replace: true });
    },
  });
  return (
    <Frame title="Confirm your e-mail address">
      <Paper withBorder p="md" radius="md">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            open.mutate();
          }}
        >
          <Stack>
            <Text>This link asks an approver to decide on a submission. Type the e-mail address it was sent to, to open it.</Text>
            <Text size="sm" c="dimmed">
              The link opens the review once{expiresAt ? `, until ${localDateTime(expiresAt)}` : ''}. Times are shown in your time zone ({timeZone}).
            </Text>
            {open.error && (
              <Alert color="red" role="alert" title="Could not open the review">
                {open.error.message}
              </Alert>
            )}
            <TextInput label="Your e-mail address" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
            <Button type="submit" loading={open.isPending}>
              Continue
            </Button>
          </Stack>
        </form>
      </Paper>
    </Frame>
  );
}

const PROBLEM: Record<Exclude<LinkStatus['state'], 'valid'>, { title: string; text: (s: LinkStatus) => string }> = {
  used: { title: 'This link was already used', text: () => 'Each link opens the review once, and this one has been opened. Ask for a new link: it goes to the address this one was sent to.' },
  replaced: { title: 'This link has expired', text: () => 'A newer link was sent for this approval, and only the newest one works. Ask for a new link, or use the newest e-mail.' },
  expired: {
    title: 'This link has expired',
    text: (s) => `The time to decide ended${s.expiresAt ? ` on ${localDateTime(s.expiresAt)}` : ''}; nothing is left to decide, so no new link can be sent.`,
  },
  decided: {
    title: 'This approval was already decided',
    text: (s) => `It was ${s.decision ?? 'decided'}${s.decidedAt ? ` on ${localDateTime(s.decidedAt)}` : ''}. Nothing is left to decide.`,
  },
  invalid: { title: 'This link does not work', text: () => 'It may be incomplete: open it from the e-mail again, or copy all of it into the address bar.' },
};

function LinkProblem({ token, status }: { token: string; status: LinkStatus }) {
  const problem = PROBLEM[status.state as Exclude<LinkStatus['state'], 'valid'>];
  // The same browser may still hold the session this link opened (the cookie): then it goes on from there.
  const session = useQuery({ queryKey: ['review-inbox'], queryFn: readInbox, retry: false, enabled: status.canResend });
  return (
    <Frame title={problem.title}>
      <Stack>
        <Alert color={status.canResend ? 'yellow' : 'gray'} role="status">
          {problem.text(status)}
        </Alert>
        {session.data && session.data.length > 0 && (
          <Anchor component={Link} to="/review">
            Continue the review opened in this browser
          </Anchor>
        )}
        {status.canResend && <Resend token={token} />}
      </Stack>
    </Frame>
  );
}

function Resend({ token }: { token: string }) {
  const [email, setEmail] = useState('');
  const send = useMutation({ mutationFn: () => must(reviewApi.POST('/api/flow/review/resend', { body: { token, email } })) });
  if (send.isSuccess) {
    return (
      <Alert color="green" role="status" title="A new link is on its way">
        Look in the inbox of {email}. The links sent before no longer work.
      </Alert>
    );
  }
  return (
    <Paper withBorder p="md" radius="md">
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          send.mutate();
        }}
      >
        <Stack>
          {send.error && (
            <Alert color="red" role="alert" title="Could not send a new link">
              {send.error.message}
            </Alert>
          )}
          <TextInput label="Your e-mail address" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} />
          <Button type="submit" loading={send.isPending}>
            Send me a new link
          </Button>
        </Stack>
      </form>
    </Paper>
  );
}

/** The session's pending approvals; null without a session (no cookie, or it ended). */
async function readInbox(): Promise<ReviewApproval[] | null> {
  const { data, error, response } = await reviewApi.GET('/api/flow/review/inbox', { params: { query: { limit: 100 } } });
  if (response.status === 401) return null;
  if (error !== undefined || !data) throw new Error(errorText(error));
  return data.data;
}

/** `/review` with a review session (the cookie): the approval chosen, or the approvals waiting. */
function Session() {
  const chosen = useSearchParams()[0].get('approval');
  const [decided, setDecided] = useState<Decided | undefined>();
  const inbox = useQuery({ queryKey: ['review-inbox'], queryFn: readInbox, retry: false, enabled: !decided });
  if (decided) return <Confirmation decided={decided} />;
  if (inbox.isPending) return <Waiting />;
  if (inbox.error) {
    return (
      <Frame title="Review">
        <Alert color="red" role="alert" title="Could not read your review">
          {inbox.error.message}
        </Alert>
      </Frame>
    );
  }
  if (!inbox.data) {
    return (
      <Frame title="Review">
        <Alert color="gray" role="status" title="Your review session has ended">
          Open the link from the approval e-mail again; if it was used already, the page sends you a new one.
        </Alert>
      </Frame>
    );
  }
  const approval = inbox.data.find((a) => a.id === chosen) ?? (inbox.data.length === 1 ? inbox.data[0] : undefined);
  if (approval) return <Approval id={approval.id} others={inbox.data.filter((a) => a.id !== approval.id)} onDecided={setDecided} />;
  return <Inbox approvals={inbox.data} />;
}

function Inbox({ approvals }: { approvals: ReviewApproval[] }) {
  return (
    <Frame title="Waiting for your decision">
      {approvals.length === 0 ? (
        <Text role="status">Nothing is waiting for you.</Text>
      ) : (
        <Stack component="ul" p={0} m={0} style={{ listStyle: 'none' }}>
          {approvals.map((a) => (
            <Paper component="li" key={a.id} withBorder p="sm">
              <Anchor component={Link} to={`/review?approval=${encodeURIComponent(a.id)}`}>
                {a.gateName}: run {a.runShortId}
              </Anchor>
              <Text size="sm" c="dimmed">
                Decide by {localDateTime(a.expiresAt)}
              </Text>
            </Paper>
          ))}
        </Stack>
      )}
    </Frame>
  );
}

interface Decided {
  decision: 'approved' | 'rejected';
  comment: string;
  at: string;
  gateName: string;
  runShortId: string;
}

function Confirmation({ decided }: { decided: Decided }) {
  return (
    <Frame title={decided.decision === 'approved' ? 'Approved' : 'Rejected'}>
      <Alert color={decided.decision === 'approved' ? 'green' : 'red'} role="status" title="Your decision is recorded">
        You {decided.decision} run {decided.runShortId} of {decided.gateName} on {localDateTime(decided.at)}.
        {decided.comment ? ` Your comment: “${decided.comment}”` : ' You left no comment.'}
      </Alert>
      <Text size="sm" c="dimmed" mt="md">
        You can close this page. The link you used no longer works.
      </Text>
    </Frame>
  );
}

function Approval({ id, others, onDecided }: { id: string; others: ReviewApproval[]; onDecided: (d: Decided) => void }) {
  const [comment, setComment] = useState('');
  const detail = useQuery({ queryKey: ['review-approval', id], queryFn: () => must(reviewApi.GET('/api/flow/review/approvals/{id}', { params: { path: { id } } })) });
  const decide = useMutation({
    mutationFn: async (action: 'approve' | 'reject') => {
      const body = comment.trim() ? { comment: comment.trim() } : {};
      const path = action === 'approve' ? '/api/flow/review/approvals/{id}/approve' : '/api/flow/review/approvals/{id}/reject';
      return must(reviewApi.POST(path, { params: { path: { id } }, body }));
    },
    onSuccess: (data) => {
      const a = detail.data!;
      onDecided({ decision: data.decision, comment: comment.trim(), at: new Date().toISOString(), gateName: a.gateName, runShortId: a.runShortId });
    },
  });
  if (detail.isPending) return <Waiting />;
  if (detail.error) {
    return (
      <Frame title="Review">
        <Alert color="red" role="alert" title="Could not read the approval">
          {detail.error.message}
        </Alert>
      </Frame>
    );
  }
  const a = detail.data;
  return (
    <Frame title={`Approve or reject: ${a.gateName}`} wide>
      <Stack>
        <Paper withBorder p="md" radius="md">
          <Stack gap={4}>
            <Text>
              Run <strong>{a.runShortId}</strong>
              {a.submittedAt ? `, submitted ${localDateTime(a.submittedAt)}` : ''}.
            </Text>
            <Text fw={600}>Decide by {localDateTime(a.expiresAt)}</Text>
            <Text size="sm" c="dimmed">
              Times are in your time zone ({timeZone}). You review as {a.approverEmail}.
            </Text>
          </Stack>
        </Paper>
        <Document detail={a} />
        <Summary payload={a.payload} schema={a.schema as FieldSchema | null} />
        <Paper component="section" aria-label="Decision" withBorder p="md" radius="md">
          <Title order={2} size="h3" mb="sm">
            Your decision
          </Title>
          <Stack>
            {a.status !== 'pending' ? (
              <Alert color="gray" role="status">
                This approval is {a.status}.
              </Alert>
            ) : (
              <>
                <Textarea label="Comment (optional)" description="Sent with your decision to the gate's owners." maxLength={1000} autosize minRows={2} value={comment} onChange={(e) => setComment(e.currentTarget.value)} />
                {decide.error && (
                  <Alert color="red" role="alert" title="Your decision was not recorded">
                    {decide.error.message}
                  </Alert>
                )}
                <Group grow>
                  <Button color="green" loading={decide.isPending && decide.variables === 'approve'} disabled={decide.isPending} onClick={() => decide.mutate('approve')}>
                    Approve
                  </Button>
                  <Button color="red" variant="outline" loading={decide.isPending && decide.variables === 'reject'} disabled={decide.isPending} onClick={() => decide.mutate('reject')}>
                    Reject
                  </Button>
                </Group>
              </>
            )}
          </Stack>
        </Paper>
        {others.length > 0 && (
          <Text size="sm">
            {others.length} more waiting for you: <Anchor component={Link} to="/review">see them all</Anchor>.
          </Text>
        )}
      </Stack>
    </Frame>
  );
}

/** The rendered document, page by page, its bytes read from this origin with the review session. */
function Document({ detail }: { detail: ReviewDetail }) {
  const doc = detail.document;
  const isPdf = doc?.contentType === 'application/pdf';
  const bytes = useQuery({
    queryKey: ['review-document', detail.id],
    enabled: isPdf,
    staleTime: Infinity,
    queryFn: async () => {
      const { data, error } = await reviewApi.GET('/api/flow/review/approvals/{id}/document', { params: { path: { id: detail.id } }, parseAs: 'arrayBuffer' });
      if (error !== undefined || !data) throw new Error(errorText(error));
      return data as ArrayBuffer;
    },
  });
  return (
    <Paper component="section" aria-label="Document" withBorder radius="md" style={{ overflow: 'hidden' }}>
      <Title order={2} size="h3" p="md" pb="xs">
        Document
      </Title>
      {!doc ? (
        <Text px="md" pb="md" c="dimmed">
          This run has no rendered document: decide on the summary below.
        </Text>
      ) : !isPdf ? (
        <Text px="md" pb="md" c="dimmed">
          The rendered document is not a PDF ({doc.contentType}) and cannot be shown here: decide on the summary below.
        </Text>
      ) : bytes.error ? (
        <Alert color="red" role="alert" m="md" title="The document could not be shown">
          {bytes.error.message}
        </Alert>
      ) : (
        <Suspense fallback={<Loader m="md" aria-label="Loading the document" />}>{bytes.data ? <PdfPreview pdf={bytes.data} /> : <Loader m="md" aria-label="Loading the document" />}</Suspense>
      )}
    </Paper>
  );
}
