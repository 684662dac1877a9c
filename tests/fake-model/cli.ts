// Runs the fake model as its own process for e2e tests and benchmarks:
//   npx tsx tests/fake-model/cli.ts [--port N] [--host H] [--script file.json]
// Scripts can also be loaded later over HTTP (POST /_fake/script).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseScript } from '../../worker/agent/scripted/check.ts';
import { startFakeModel } from './server.ts';

const { values } = parseArgs({
  options: { port: { type: 'string' }, host: { type: 'string' }, script: { type: 'string' } },
});

const port = values.port === undefined ? 0 : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: expected an integer 0-65535, got ${JSON.stringify(values.port)}`);
  process.exit(2);
}

let script;
if (values.script !== undefined) {
  try {
    script = parseScript(JSON.parse(readFileSync(values.script, 'utf8')));
  } catch (e) {
    console.error(`--script ${values.script}: ${(e as Error).message}`);
    process.exit(2);
  }
}

const fake = await startFakeModel({ port, host: values.host, script });
console.log(`fake model listening on ${fake.url}`);

// Close cleanly on a signal so hanging streams do not keep the process alive.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void fake.close().then(() => process.exit(0)));
}
