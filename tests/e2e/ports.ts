// Ports of the end-to-end stack: apart from `npm start`'s (4173 / 8787) so both can run at once;
// E2E_APP_PORT and E2E_PROXY_PORT move them (two checkouts testing side by side).
export const E2E_APP_PORT = Number(process.env.E2E_APP_PORT) || 4183;
export const E2E_PROXY_PORT = Number(process.env.E2E_PROXY_PORT) || 8797;
export const E2E_APP_URL = `http://127.0.0.1:${E2E_APP_PORT}`;
export const E2E_PROXY_URL = `http://127.0.0.1:${E2E_PROXY_PORT}`;
/** A fake secret: tests prove it reaches the model and never the page. */
export const E2E_PROXY_SECRET = 'test-proxy-secret-5f2c9a7e1b';
