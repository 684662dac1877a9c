// Test support: a device token from a proxy started with `localPairing: true`.
export async function pairLocally(proxyUrl: string, label = 'test device'): Promise<string> {
  const response = await fetch(`${proxyUrl}/v1/pair/local`, { method: 'POST', body: JSON.stringify({ label }) });
  if (response.status !== 201) throw new Error(`local pairing failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}
