/**
 * Which image URLs a document may load. Templates and variable values may only point at
 * `data:` images or at http(s) hosts the operator listed; everything else is never requested.
 * Entries: `cdn.example.com` (that host), `*.example.com` (its subdomains), `host:port`.
 */

export function isDataImageUrl(src: string): boolean {
  return /^data:image\/(?:png|jpe?g|gif|webp|svg\+xml)[;,]/i.test(src.trim());
}

export function isAllowedRemoteUrl(src: string, allowlist: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username || url.password) return false;
  const host = url.hostname.toLowerCase();
  const hostPort = url.port ? `${host}:${url.port}` : host;
  return allowlist.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith('*.')) return host.endsWith(entry.slice(1)) && host.length > entry.length - 1;
    return entry.includes(':') && !entry.startsWith('[') ? entry === hostPort : entry === host || entry === hostPort;
  });
}

/** True when a document may show this image source. */
export function isAllowedImageSource(src: string, allowlist: readonly string[]): boolean {
  return isDataImageUrl(src) || isAllowedRemoteUrl(src, allowlist);
}
