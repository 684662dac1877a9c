// Imported first by the workers that parse with zod: zod's compiled parsers are made with
// `new Function`, which the workers' Content-Security-Policy refuses (no eval), and its probe for
// eval is itself reported as a violation. Its plain parsers need neither.
import { config } from 'zod';

config({ jitless: true });
