import { Center, Loader } from '@mantine/core';
import { lazy, Suspense, type ReactNode } from 'react';
import { createBrowserRouter, Navigate, useLocation } from 'react-router';
import { ForgotPasswordPage, InvitationPage, ResetPasswordPage, VerifyEmailPage } from './pages/AccountLinks';
import { ApiKeysPage } from './pages/ApiKeys';
import { DocumentsPage } from './pages/Documents';
import { SettingsPage } from './pages/Settings';
import { SignInPage, SignUpPage } from './pages/SignIn';
import { TeamPage } from './pages/Team';
import { TemplatePage } from './pages/Template';
import { TemplatesPage } from './pages/Templates';
import { WebhooksPage } from './pages/Webhooks';
import { useSession } from './session';
import { Shell } from './Shell';

/** Pages behind sign-in: the sign-in page first, then back where the person was going. */
function SignedIn({ children }: { children: ReactNode }) {
  const { user, signedOutHere } = useSession();
  const location = useLocation();
  if (user === undefined) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  // A session that ran out comes back to where the person was; one they ended starts afresh.
  if (!user) return <Navigate to="/sign-in" replace state={signedOutHere ? undefined : { from: `${location.pathname}${location.search}` }} />;
  return <>{children}</>;
}

// The designer (Puck and its fields) is a chunk of its own, loaded when it is opened.
const Designer = lazy(() => import('./designer/Designer'));
// The Usage page's charts (recharts) likewise, loaded when the page is opened.
const UsagePage = lazy(() => import('./pages/Usage'));
// Flow, Reporting, the reviewer's page and the embedded designer: a chunk per area, each with its own sub-routes.
const GatesArea = lazy(() => import('./pages/flow/gates'));
const RunsArea = lazy(() => import('./pages/flow/runs'));
const ApprovalsArea = lazy(() => import('./pages/flow/approvals'));
const FlowAnalyticsArea = lazy(() => import('./pages/flow/analytics'));
const SourcesArea = lazy(() => import('./pages/reporting/sources'));
const ReportsArea = lazy(() => import('./pages/reporting/reports'));
const ReviewArea = lazy(() => import('./pages/review'));
const EmbeddedDesigner = lazy(() => import('./embed'));

function Loading() {
  return (
    <Center h="50vh">
      <Loader aria-label="Loading" />
    </Center>
  );
}

/** A lazily loaded page, with the loader while its chunk arrives. */
function later(page: ReactNode): ReactNode {
  return <Suspense fallback={<Loading />}>{page}</Suspense>;
}

export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  { path: '/sign-up', element: <SignUpPage /> },
  { path: '/forgot-password', element: <ForgotPasswordPage /> },
  // The pages of the links in e-mails (docs/web.md "Links in e-mails"), signed in or not.
  { path: '/verify-email', element: <VerifyEmailPage /> },
  { path: '/reset-password', element: <ResetPasswordPage /> },
  { path: '/invitations/:id', element: <InvitationPage /> },
  // The approver's magic link (docs/web.md "The reviewer's page"): no account, no frame.
  { path: '/review/*', element: later(<ReviewArea />) },
  // The designer in a customer's own app (docs/embedding.md): an embed token, no account, no frame.
  { path: '/embed/designer/:templateId', element: later(<EmbeddedDesigner />) },
  {
    path: '/',
    element: (
      <SignedIn>
        <Shell />
      </SignedIn>
    ),
    children: [
      { index: true, element: <Navigate to="/templates" replace /> },
      { path: 'templates', element: <TemplatesPage /> },
      { path: 'templates/:id', element: <TemplatePage /> },
      {
        path: 'templates/:id/design',
        element: later(<Designer />),
      },
      { path: 'documents', element: <DocumentsPage /> },
      { path: 'documents/webhooks', element: <WebhooksPage /> },
      { path: 'api-keys', element: <ApiKeysPage /> },
      { path: 'team', element: <TeamPage /> },
      { path: 'usage', element: later(<UsagePage />) },
      { path: 'settings', element: <SettingsPage /> },
      { path: 'flow', element: <Navigate to="/flow/gates" replace /> },
      { path: 'flow/gates/*', element: later(<GatesArea />) },
      { path: 'flow/runs/*', element: later(<RunsArea />) },
      { path: 'flow/analytics/*', element: later(<FlowAnalyticsArea />) },
      { path: 'approvals/*', element: later(<ApprovalsArea />) },
      { path: 'reporting', element: <Navigate to="/reporting/datasources" replace /> },
      { path: 'reporting/datasources/*', element: later(<SourcesArea area="datasources" />) },
      { path: 'reporting/queries/*', element: later(<SourcesArea area="queries" />) },
      { path: 'reporting/reports/*', element: later(<ReportsArea area="reports" />) },
      { path: 'reporting/schedules/*', element: later(<ReportsArea area="schedules" />) },
      { path: 'reporting/runs/*', element: later(<ReportsArea area="runs" />) },
      { path: 'reporting/channels/*', element: later(<ReportsArea area="channels" />) },
      { path: 'reporting/imports/*', element: later(<ReportsArea area="imports" />) },
      { path: '*', element: <Navigate to="/templates" replace /> },
    ],
  },
]);
