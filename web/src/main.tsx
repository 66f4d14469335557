import '@mantine/core/styles.css';
import { createTheme, MantineProvider, Modal, PasswordInput } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { setNonce } from 'get-nonce';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { cspNonce } from './csp';
import { router } from './routes';
import { SessionProvider } from './session';

// The scroll lock of dialogs (react-remove-scroll) writes its <style> with the nonce get-nonce holds.
setNonce(cspNonce);

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
    <MantineProvider theme={theme} getStyleNonce={() => cspNonce}>
      <QueryClientProvider client={queries}>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
