// proxy.overhead: what the proxy adds to a streamed model request, against calling the scripted
// model directly, measured alternately in the same run.
import { startLocalProxy } from '../cloudflare-proxy/local.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { percentile, report, round } from './stats.ts';

const ROUNDS = 200;
const WARMUP = 20;

export async function benchProxy(): Promise<void> {
  const fake = await startFakeModel({ port: 0 });
  fake.load({ name: 'bench', turns: [{ reply: { content: [{ type: 'text', text: 'A short streamed reply of a few words.' }] }, repeat: -1 }] });
  const proxy = await startLocalProxy({ port: 0, upstream: fake.url, apiKey: 'test-bench-key', localPairing: true, deviceRequestsPerMinute: 100_000 });
  // Every proxied request carries a device token, checked and counted by the Devices object: part of the cost measured.
  const { token } = (await (await fetch(`${proxy.url}/v1/pair/local`, { method: 'POST', body: '{}' })).json()) as { token: string };
  const body = JSON.stringify({ model: 'bench', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const once = async (base: string) => {
    const started = performance.now();
    const response = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${token}` },
      body,
    });
    await response.text();
    if (!response.ok) throw new Error(`${base} answered ${response.status}`);
    return performance.now() - started;
  };
  try {
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const d = await once(fake.url);
      const p = await once(proxy.url);
      if (i >= WARMUP) {
        direct.push(d);
        proxied.push(p);
      }
      if (i % 50 === 0) fake.reset(); // keeps the recorded requests small
    }
    const overhead = proxied.map((p, i) => p - direct[i]!);
    const directP50 = percentile(direct, 50);
    const proxiedP50 = percentile(proxied, 50);
    report({
      bench: 'proxy.overhead',
      value: round(proxiedP50 - directP50),
      unit: 'ms',
      n: ROUNDS,
      p50: round(percentile(overhead, 50)),
      p95: round(percentile(overhead, 95)),
      direct_p50: round(directP50),
      proxied_p50: round(proxiedP50),
      ratio_vs_direct: round(proxiedP50 / directP50),
    });
  } finally {
    await proxy.dispose();
    await fake.close();
  }
}
