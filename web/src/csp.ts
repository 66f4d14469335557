/**
 * The page's CSP nonce, written by the API into index.html (api/web/web-app.ts): the `<style>`
 * elements libraries write (the component library, the dialogs' scroll lock, the designer's
 * drag and drop) carry it, the only inline things the policy allows.
 */
export const cspNonce: string = document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? '';
