/**
 * Saves what an API answer carried as a file, under the name its Content-Disposition gives (or
 * `fallback`): the answers that need the access token (exports) cannot be plain links.
 */
export function saveAnswer(blob: Blob, response: Response, fallback: string): void {
  const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? fallback;
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
