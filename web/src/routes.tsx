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

function Loading() {
  return (
    <Center h="50vh">
      <Loader aria-label="Loading" />
    </Center>
  );
}

export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  { path: '/sign-up', element: <SignUpPage /> },
  { path: '/forgot-password', element: <ForgotPasswordPage /> },
  // The pages of the links in e-mails (docs/web.md "Links in e-mails"), signed in or not.
  { path: '/verify-email', element: <VerifyEmailPage /> },
  { path: '/reset-password', element: <ResetPasswordPage /> },
  { path: '/invitations/:id', element: <InvitationPage /> },
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
        element: (
          <Suspense fallback={<Loading />}>
            <Designer />
          </Suspense>
        ),
      },
      { path: 'documents', element: <DocumentsPage /> },
      { path: 'documents/webhooks', element: <WebhooksPage /> },
      { path: 'api-keys', element: <ApiKeysPage /> },
      { path: 'team', element: <TeamPage /> },
      {
        path: 'usage',
        element: (
          <Suspense fallback={<Loading />}>
            <UsagePage />
          </Suspense>
        ),
      },
      { path: 'settings', element: <SettingsPage /> },
      { path: '*', element: <Navigate to="/templates" replace /> },
    ],
  },
]);
