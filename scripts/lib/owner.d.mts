// Types for owner.mjs, so TypeScript callers (tests) get them.

/** Where the local proxy keeps its owner token, devices and, while `npm start` runs, its URL. */
export const proxyStateDir: string;
/** The local owner token, made once (readable by this user only). */
export function localOwnerToken(): string;
/** The token `npm run pair` uses: OWNER_TOKEN, else the local one if `npm start` made it. */
export function ownerTokenForPairing(): string | null;
/** Notes where `npm start`'s proxy listens, with the process that runs it. */
export function recordLocalProxyUrl(url: string): void;
/** Forgets it when that proxy stops (only if it is still this process's note). */
export function forgetLocalProxyUrl(): void;
/** The proxy `npm run pair` talks to, and where its address came from. */
export function proxyForPairing(): { url: string; from: string };
