// Prints the repository's import cycles (type-only imports included), one line per cycle; exits 1
// when there is one. `npm run lint` fails on the same cycles through the boundaries/no-cycle rule.
import path from 'node:path';
import { repositoryCycles } from './boundaries.js';

const root = path.resolve(import.meta.dirname, '..');
const cycles = new Set([...repositoryCycles().values()].map((members) => members.map((m) => path.relative(root, m)).sort().join(' <-> ')));
for (const cycle of cycles) console.log(cycle);
console.log(`${cycles.size} import cycle(s)`);
process.exitCode = cycles.size === 0 ? 0 : 1;
