import '@mantine/core/styles.css';
import { createTheme, MantineProvider, Modal, PasswordInput } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { router } from './routes';
import { SessionProvider } from './session';

// The page's CSP nonce, written by the API into index.html (api/web/web-app.ts): the component
// library's <style> elements are the only inline things the policy allows.
const nonce = document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? '';
// The scroll lock of dialogs (react-remove-scroll) writes its <style> with the nonce get-nonce holds.
setNonce(nonce);

const theme = createTheme({
  primaryColor: 'blue',
  defaultRadius: 'md',
  // A person who asked their system for less motion gets dialogs without their fade.
  respectReducedMotion: true,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif',
  // Icon-only buttons the library draws get a name a screen reader can say.
  components: {
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    PasswordInput: PasswordInput.extend({ defaultProps: { visibilityToggleButtonProps: { 'aria-label': 'Show the password' } } }),
  },
});
const queries = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: true } } });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} getStyleNonce={() => nonce}>
      <QueryClientProvider client={queries}>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
