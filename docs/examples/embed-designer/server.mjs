// The designer in your own app: a complete example (docs/embedding.md).
//
// Your server mints a short-lived embed token with an API key that has the `embed_designer` permission,
// and serves a page whose <iframe> opens Formwork's designer for one template. The page listens for the
// designer's messages. No dependency beyond Node 20.
//
//   FORMWORK_URL=https://formwork.example.com FORMWORK_API_KEY=fm_live_… TEMPLATE_ID=<uuid> \
//     node docs/examples/embed-designer/server.mjs
//
// Then open http://127.0.0.1:8080 (PORT, HOST). This origin must be on the project's list:
//   PUT /api/teams/<project id>/embed-origins {"origins": ["http://127.0.0.1:8080"]}
// DESIGNER_MODE=view opens it read-only; SITE_ORIGIN names this page's origin when a proxy serves it.
import { createServer } from 'node:http';

const formwork = new URL(process.env.FORMWORK_URL ?? 'http://localhost:3000').origin;
const apiKey = process.env.FORMWORK_API_KEY;
const templateId = process.env.TEMPLATE_ID;
const mode = process.env.DESIGNER_MODE === 'view' ? 'view' : 'edit';
if (!apiKey || !templateId) throw new Error('Set FORMWORK_API_KEY and TEMPLATE_ID');

/** Server side only: the API key never reaches the browser; the token it mints lives an hour at most. */
async function mintDesignerUrl(origin) {
  const res = await fetch(`${formwork}/api/templates/${encodeURIComponent(templateId)}/embed-tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ mode, ttlSeconds: 3600, origin }),
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`Formwork refused the token: ${res.status} ${body.code} ${body.message}`);
  return body.url;
}

const escape = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(designerUrl) {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Your invoice layout</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1500px; padding: 16px; }
    iframe { width: 100%; height: 820px; border: 1px solid #ccc; border-radius: 8px; }
  </style>
</head>
<body>
  <h1>Your invoice layout</h1>
  <p>Change the layout of your invoices below; "Publish" makes it the one your invoices use.</p>
  <iframe title="Invoice designer" src="${escape(designerUrl)}"></iframe>
  <h2 id="events-title">Designer events</h2>
  <ol aria-labelledby="events-title" id="events"></ol>
  <script>
    const FORMWORK_ORIGIN = ${JSON.stringify(formwork)};
    const frame = document.querySelector('iframe');
    window.designerEvents = [];
    window.addEventListener('message', (event) => {
      // Only the designer's frame, from Formwork's origin, is listened to.
      if (event.origin !== FORMWORK_ORIGIN || event.source !== frame.contentWindow) return;
      const message = event.data;
      if (!message || message.source !== 'formwork-designer') return;
      window.designerEvents.push({ origin: event.origin, data: message });
      const item = document.createElement('li');
      if (message.type === 'ready') item.textContent = 'Designer ready (' + message.mode + ')';
      if (message.type === 'saved') item.textContent = 'Draft saved at ' + message.savedAt;
      if (message.type === 'published') item.textContent = 'Published version ' + message.version;
      document.getElementById('events').append(item);
    });
  </script>
</body>
</html>
`;
}

const server = createServer(async (req, res) => {
  if (req.method !== 'GET' || req.url !== '/') {
    res.writeHead(404).end();
    return;
  }
  try {
    // The origin of this page, as the browser sees it (behind a proxy, set SITE_ORIGIN=https://app.example.com).
    const url = await mintDesignerUrl(process.env.SITE_ORIGIN ?? `http://${req.headers.host}`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page(url));
  } catch (err) {
    res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err.message));
  }
});
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`listening on http://${address}:${port}`);
});
