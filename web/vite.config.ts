import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard's build (docs/web.md): web/dist, served by the API role at `/` (api/web/web-app.ts).
// Nothing is inlined as a data: URL (fonts would then break the page's font-src 'self'); every
// asset is a file of the build, so the page loads nothing from another origin.
export default defineConfig({
  plugins: [react()],
  // The typed client (clients/ts, docs/openapi.md "The typed client") from its source, under the name it installs as.
  resolve: { alias: { '@formwork/client': fileURLToPath(new URL('../clients/ts/index.ts', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, chunkSizeWarningLimit: 1200 },
  // `npm run dev --workspace web`: the API of `npm start` behind Vite's dev server.
  server: { proxy: { '/api': 'http://localhost:3000' } },
});
