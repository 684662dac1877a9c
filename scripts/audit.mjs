// `npm run audit`: npm's advisory check of the packages the app ships (dependencies only), failing
// on a high or critical advisory. npm's audit endpoint must be reachable: where the registry
// refuses it (some mirrors answer 405), this says so and exits 2 rather than pass unchecked.
import { spawnSync } from 'node:child_process';

const run = spawnSync('npm', ['audit', '--omit=dev', '--audit-level=high', '--json'], { encoding: 'utf8' });
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  report = null;
}
// A refused request comes back as the HTTP error itself ({ message, statusCode }), not a report.
const unreachable = !report?.metadata;
if (unreachable) {
  console.error(`npm audit could not reach an advisory database from here: ${report?.message ?? report?.error?.summary ?? 'no report'}`);
  console.error('Nothing was checked. Run `npm run audit` where the npm registry\'s audit endpoint is reachable.');
  process.exit(2);
}
const counts = report.metadata?.vulnerabilities ?? {};
console.log(JSON.stringify({ audit: 'dependencies', ...counts }));
process.exit((counts.high ?? 0) + (counts.critical ?? 0) > 0 ? 1 : 0);
