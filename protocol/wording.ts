// How the same thing reads on both sides of the boundary: the worker's messages and the screen
// say a size the same way.

/**
 * "0 bytes", "12 KB", "3.4 MB", "2.2 GB" (decimal units, as browsers word storage): how a size
 * reads in the worker's messages and on the screen alike.
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.max(0, Math.round(bytes))} bytes`;
  if (bytes < 999_500) return `${Math.round(bytes / 1e3)} KB`;
  if (bytes < 9_950_000) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes < 999_500_000) return `${Math.round(bytes / 1e6)} MB`;
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
