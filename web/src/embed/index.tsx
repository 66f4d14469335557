import { Alert, Box, Center, Loader } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { api, must, setAccessToken } from '../api';
import { TemplateDesigner } from '../designer/Designer';
import type { DesignerHost } from '../designer/host';

/**
 * The designer in another site's page (docs/embedding.md): `/embed/designer/:templateId?token=fmed_…`
 * in an `<iframe>` of an origin the project allows. No navigation, no account, no session: the embed
 * token is the only credential.
 *
 * - **The token** is read from the address once, kept in memory (this module and the API client's,
 *   never localStorage or sessionStorage) and taken out of the address at once, so it is not in the
 *   history, a bookmark or a copied link. A reload of the frame then has no token: the customer's page
 *   mints a new one.
 * - **Messages to the parent page** (`postMessage`, to the token's origin only, never `*`):
 *   `{source: 'formwork-designer', type: 'ready', templateId, mode}` once loaded,
 *   `{…, type: 'saved', templateId, savedAt}` after each draft saved,
 *   `{…, type: 'published', templateId, version, versionId, publishedAt}` after each publish.
 */

let heldToken: string | undefined;

/** The token from the address (the first time), else the one already held. */
function takeToken(search: string): string | undefined {
  const fromAddress = new URLSearchParams(search).get('token');
  if (fromAddress) {
    heldToken = fromAddress;
    setAccessToken(fromAddress);
  }
  return heldToken;
}

type DesignerMessage =
  | { type: 'ready'; templateId: string; mode: 'edit' | 'view' }
  | { type: 'saved'; templateId: string; savedAt: string }
  | { type: 'published'; templateId: string; version: number; versionId: string; publishedAt: string };

export default function EmbeddedDesigner() {
  const { templateId = '' } = useParams();
  const location = useLocation();
  const navigate = useNavigate();
  const [token] = useState(() => takeToken(location.search));

  // The token leaves the address bar (and the history entry) as soon as it is held.
  useEffect(() => {
    if (new URLSearchParams(location.search).has('token')) void navigate({ pathname: location.pathname }, { replace: true });
  }, [location.search, location.pathname, navigate]);

  const session = useQuery({ queryKey: ['embed-session'], queryFn: () => must(api.GET('/api/embed/session')), enabled: !!token, staleTime: Infinity });
  const origin = session.data?.origin;

  const host = useMemo<DesignerHost>(() => {
    const post = (message: DesignerMessage) => {
      if (origin && window.parent !== window) window.parent.postMessage({ source: 'formwork-designer', ...message }, origin);
    };
    return {
      backLink: false,
      uploads: false,
      onSaved: (saved) => post({ type: 'saved', ...saved }),
      onPublished: (published) => post({ type: 'published', ...published }),
    };
  }, [origin]);

  useEffect(() => {
    if (session.data && origin && window.parent !== window) window.parent.postMessage({ source: 'formwork-designer', type: 'ready', templateId: session.data.templateId, mode: session.data.mode }, origin);
  }, [session.data, origin]);

  let body;
  if (!token) body = <Alert color="red" role="alert" title="No designer link">This page opens with a designer link from the site it is embedded in. Reload that page for a new one.</Alert>;
  else if (session.error) body = <Alert color="red" role="alert" title="This designer link no longer works">{session.error.message}. Reload the page around it for a new link.</Alert>;
  else if (!session.data) {
    body = (
      <Center h="50vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  } else if (session.data.templateId !== templateId) body = <Alert color="red" role="alert" title="Another template">This link opens another template&apos;s designer.</Alert>;
  else body = <TemplateDesigner id={templateId} canEdit={session.data.mode === 'edit'} ready host={host} />;

  return (
    <Box component="main" aria-label="Designer" p="sm">
      {body}
    </Box>
  );
}
